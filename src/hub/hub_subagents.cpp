// Hub: the sub-agent transcripts of foreign seats, listed and paged on the writer.
#include "hub_writer.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>

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

} // namespace sluice::hub
