// Hub, its local sessions (Claude Code's own files): listed and followed; their sub-agent
// transcripts, listed and paged on the writer; the seat a terminal session's hook reports about;
// continuing a session as a hosted claude seat (one seat per session, its history starting where
// the session's does).
#include "hub_writer.hpp"
#include "ids.hpp"
#include "seed.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/agent_kinds.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/codex_sessions.hpp>
#include <sluice/hub/file_source.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>

namespace sluice::hub {

namespace {

// A page of an inline sub-agent's rows: those before `before` (default: all), newest first up
// to the window's byte cap, as one group (a sub-agent's rows open no turn of their own).
std::string inline_page(const std::vector<std::string>& rows, std::optional<std::uint64_t> before) {
    std::vector<FramePtr> frames;
    for (const auto& line : rows) {
        if (auto f = Frame::parse(line); f && (*f)->is_frame()) {
            frames.push_back(std::move(*f));
        }
    }
    const auto end = std::min<std::uint64_t>(before.value_or(frames.size()), frames.size());
    auto first = end;
    std::uint64_t bytes = 0;
    while (first > 0
           && (first == end || bytes + frames[first - 1]->wire_bytes() <= CONVERSATION_CAP_BYTES)) {
        bytes += frames[--first]->wire_bytes();
    }
    Page page;
    if (end > 0) {
        const auto lo = static_cast<std::ptrdiff_t>(first);
        const auto hi = static_cast<std::ptrdiff_t>(end);
        page.turns.push_back(PageTurn{first, {frames.begin() + lo, frames.begin() + hi}});
    }
    if (first > 0) {
        page.cursor = first;
    }
    return wire::page_json(page, end);
}

} // namespace

// ---- listing ---------------------------------------------------------------------------

SeatSpec Hub::foreign_spec(const std::string& id, const Listed& l) {
    SeatSpec spec;
    spec.id = id;
    spec.name = l.listing.title.empty() ? id : l.listing.title;
    spec.agent = foreign_source(l.listing); // the agent that wrote it: claude or codex
    spec.epoch = l.epoch;                   // until opened: then the one kept with its index
    spec.session_id = l.listing.session_id;
    spec.cwd = l.listing.project;
    return spec;
}

std::optional<std::string> Hub::add_foreign(std::filesystem::path file, ForeignListing listing) {
    auto id = listing.format == RowFormat::codex_rollout ? codex_seat_id(listing.session_id)
                                                         : foreign_seat_id(listing.session_id);
    std::unique_lock lock(mu_);
    if (auto it = foreign_.find(id); it != foreign_.end() && it->second.file == file) {
        // Listed already from a hook (SessionStart, before the file was written): the same file.
        if (auto seat = it->second.seat) {
            lock.unlock();
            net::post(seat->strand(), [seat] { seat->source_changed(); });
        } else {
            it->second.listing = std::move(listing);
            it->second.last_activity = it->second.listing.mtime;
        }
        return id;
    }
    if (seats_.contains(id) || foreign_.contains(id)) {
        return std::nullopt;
    }
    const auto last = listing.mtime;
    foreign_.emplace(
        id, Listed{std::move(file), std::move(listing), new_id("e"), last, nullptr, nullptr});
    foreign_order_.push_back(id);
    return id;
}

void Hub::foreign_changed(std::string_view id) {
    std::shared_ptr<Seat> seat;
    std::filesystem::path file;
    ForeignListing listing;
    {
        std::lock_guard lock(mu_);
        auto it = foreign_.find(std::string(id));
        if (it == foreign_.end()) {
            return;
        }
        seat = it->second.seat;
        if (!seat) {
            file = it->second.file;
            listing = it->second.listing;
        }
    }
    if (!seat) {
        if (!relist_if_changed(file, listing)) {
            return; // the reads ran with no lock held
        }
        std::lock_guard lock(mu_);
        auto& l = foreign_.at(std::string(id));
        seat = l.seat;
        if (!seat) {
            l.listing = std::move(listing);
            l.last_activity = std::chrono::system_clock::now();
            return;
        }
    }
    // Made a seat (perhaps while its listing was read again): the seat looks for itself.
    net::post(seat->strand(), [seat] { seat->source_changed(); });
}

// ---- sub-agents ------------------------------------------------------------------------

Result<std::shared_ptr<SubagentIndex>> Hub::foreign_subagents(std::string_view id) {
    {
        std::lock_guard lock(mu_);
        if (auto it = foreign_.find(std::string(id)); it != foreign_.end()) {
            auto& index = it->second.subagents;
            if (!index) {
                index = std::make_shared<SubagentIndex>(it->second.file);
            }
            return index;
        }
    }
    if (find(id)) {
        return Failure::of(errc::conflict, "only a Claude Code session has sub-agents");
    }
    return Failure::of(errc::not_found, "no such seat: " + std::string(id));
}

void Hub::subagents(std::string_view id, const net::any_io_executor& ex, SubagentsDone done) {
    auto index = foreign_subagents(id);
    if (!index) {
        net::post(ex, [done = std::move(done), f = index.error()]() { done(f); });
        return;
    }
    // Read on from the last request: only what the files gained since (SubagentIndex).
    on_writer<std::vector<Subagent>>(
        [index = std::move(*index)]() -> Result<std::vector<Subagent>> { return index->list(); },
        ex,
        std::move(done));
}

void Hub::subagent_history(
    std::string_view id,
    std::string_view agent,
    std::optional<std::uint64_t> before,
    std::size_t turns,
    const net::any_io_executor& ex,
    PageDone done) {
    auto index = foreign_subagents(id);
    if (!index) {
        net::post(ex, [done = std::move(done), f = index.error()]() { done(f); });
        return;
    }
    auto job = [index = std::move(*index),
                a = std::string(agent),
                before,
                turns]() -> Result<std::string> {
        if (auto rows = index->inline_rows(a)) {
            return inline_page(*rows, before);
        }
        auto p = find_subagent_file(index->session_file(), a);
        if (!p) {
            return Failure::of(errc::not_found, "no such sub-agent: " + a);
        }
        TranscriptOptions o;
        o.read_only = true;
        o.follow = true; // a row still being written is waited for, never cut
        o.write_index = false;
        auto t = Transcript::open(*p, o);
        if (!t) {
            return Failure{t.error(), "cannot open " + p->string() + ": " + t.error().message()};
        }
        const auto at = before.value_or(t->frame_count());
        auto page = t->page(at, turns);
        if (!page) {
            return Failure{
                page.error(), "cannot read " + p->string() + ": " + page.error().message()};
        }
        return wire::page_json(*page, at);
    };
    on_writer<std::string>(std::move(job), ex, std::move(done));
}

Result<std::shared_ptr<Seat>> Hub::hooked_seat(const HookCall& call) {
    const auto id = foreign_seat_id(call.session_id);
    if (auto seat = find(id)) {
        return seat;
    }
    const std::filesystem::path file(call.transcript_path);
    if (file.filename() != call.session_id + ".jsonl" || !file.is_absolute()) {
        return Failure::of(
            errc::not_found,
            "no session " + call.session_id
                + " here, and its transcript_path does not name its "
                  "session file");
    }
    // Listed from the hook: its file as the listing reads it, or (not written yet) what the
    // hook says of it.
    ForeignListing listing;
    if (auto read = list_session_file(file)) {
        listing = std::move(*read);
    }
    listing.session_id = call.session_id;
    if (listing.project.empty()) {
        listing.project = call.cwd;
    }
    if (listing.mtime == std::chrono::system_clock::time_point{}) {
        listing.mtime = std::chrono::system_clock::now();
    }
    if (!add_foreign(file, std::move(listing))) {
        return Failure::of(
            errc::conflict, "seat " + id + " is taken by another file or by a seat of sluice's");
    }
    if (auto seat = find(id)) {
        return seat;
    }
    return Failure::of(errc::not_found, "no session " + call.session_id + " here");
}

std::shared_ptr<Seat> Hub::continued_seat(std::string_view id) const {
    std::string session;
    std::shared_ptr<Seat> opened;
    std::vector<std::shared_ptr<Seat>> hosted;
    {
        std::lock_guard lock(mu_);
        const auto it = foreign_.find(std::string(id));
        if (it == foreign_.end()) {
            return nullptr;
        }
        session = it->second.listing.session_id;
        opened = it->second.seat;
        for (const auto& seat : order_) {
            if (!seat->foreign() && !seat->mirror()) {
                hosted.push_back(seat);
            }
        }
    }
    // Summaries outside the hub's lock (each takes its seat's). An opened session's own
    // summary names its session (a relisted file's listing may not).
    if (opened) {
        if (auto sid = opened->summary().session_id; !sid.empty()) {
            session = std::move(sid);
        }
    }
    for (const auto& seat : hosted) {
        const auto s = seat->summary();
        if (hosts_cli(s.agent) && !session.empty() && s.session_id == session) {
            return seat;
        }
    }
    return nullptr;
}

void Hub::continue_foreign(std::string_view id, const net::any_io_executor& ex, CreateDone done) {
    const auto from = find(id);
    std::optional<Failure> refused;
    SeatSpec spec;
    if (!from) {
        refused = Failure::of(errc::not_found, "no such seat: " + std::string(id));
    } else if (!from->foreign()) {
        refused = Failure::of(
            errc::conflict, "only a Claude Code or Codex session on this machine can be continued");
    } else if (auto seat = continued_seat(id)) {
        // Continued before: that seat, not a second one resuming the same session.
        net::post(ex, [done = std::move(done), seat = std::move(seat)]() { done(seat); });
        return;
    } else {
        const auto s = from->summary();
        // The agent that wrote it resumes it: a claude seat a Claude Code session, a codex seat
        // a Codex thread (never one handed the other's id).
        spec.agent = s.source == "codex" ? "codex" : "claude";
        spec.name = s.title.empty() ? s.id : s.title;
        spec.cwd = s.project;
        if (spec.cwd.empty()) {
            refused = Failure::of(errc::conflict, "the session names no cwd to continue it in");
        } else {
            refused = check_spec(spec); // clears session_id: set below, never from a client
        }
    }
    if (refused) {
        net::post(ex, [done = std::move(done), f = std::move(*refused)]() { done(f); });
        return;
    }
    spec.session_id = from->summary().session_id;
    std::filesystem::path history;
    {
        std::lock_guard lock(mu_);
        if (const auto it = foreign_.find(std::string(id)); it != foreign_.end()) {
            history = it->second.file;
        }
    }
    make_on_writer(std::move(spec), ex, std::move(done), std::move(history));
}

} // namespace sluice::hub
