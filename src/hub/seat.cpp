// Seat, the agent's side: opening, turns (FIFO prompt queue, agent sink on the strand, cancel,
// end), permission prompts, durable before published (frames through the journal into the feed
// once appended, in order; previews held behind frames still being appended), and close.
#include "hook_bridge.hpp"
#include "ids.hpp"
#include "seat_sink.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/search_indexer.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/usage.hpp>
#include <sluice/hub/wire.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

namespace sluice::hub {

namespace json = boost::json;

// ---- lifecycle -----------------------------------------------------------------------------

Seat::Seat(net::io_context& io, SeatSpec spec, SeatOptions opt)
    : strand_(net::make_strand(io))
    , spec_(std::move(spec))
    , opt_(std::move(opt))
    , journal_(Journal::make(spec_.id, strand_, opt_.writer, opt_.dir, opt_.sync_interval))
    , feed_(spec_.id, spec_.epoch, opt_.budget) {
}

Seat::~Seat() = default;

std::shared_ptr<Seat> Seat::make(net::io_context& io, SeatSpec spec, SeatOptions opt) {
    std::shared_ptr<Seat> seat(new Seat(io, std::move(spec), std::move(opt)));
    seat->journal_->bind(seat);
    return seat;
}

namespace {

std::optional<std::chrono::system_clock::time_point> written_at(const std::filesystem::path& file) {
    std::error_code ec;
    const auto written = std::filesystem::last_write_time(file, ec);
    if (ec) {
        return std::nullopt;
    }
    return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
        std::chrono::file_clock::to_sys(written));
}

} // namespace

Result<std::shared_ptr<Seat>> Seat::open(net::io_context& io, SeatSpec spec, SeatOptions opt) {
    if (spec.id.empty()) {
        spec.id = new_id("s");
    }
    if (spec.epoch.empty()) {
        spec.epoch = new_id("e");
    }
    auto seat = make(io, std::move(spec), std::move(opt));
    auto win = seat->journal_->open(seat->spec_, seat->opt_.budget);
    if (!win) {
        return win.error();
    }
    seat->feed_.replace(seat->spec_.epoch, std::move(*win), /*restart=*/false);
    const auto& window = seat->feed_.window();
    std::vector<json::object> history;
    history.reserve(window.size());
    for (auto pos = window.first(); pos < window.end(); ++pos) {
        // A copy read from the JSON: row() would keep each frame's object in the window.
        const auto& f = *window.at(pos);
        history.push_back(f.keeps_row() ? f.row() : json::parse(f.json()).as_object());
    }
    if (window.end() > 0) {
        seat->last_activity_ = written_at(seat->opt_.dir / "transcript.jsonl"); // when last written
    }
    if (const auto& limits = seat->opt_.limits) {
        limits->note(seat->spec_.id, seat->spec_.budget_usd, seat->spec_.spend);
        seat->spec_.budget_left = limits->left(seat->spec_.id, utc_day_now());
    }
    AgentOrReason made;
    try {
        made = seat->opt_.make_agent(seat->spec_, std::move(history), seat->strand_);
    } catch (const std::exception& e) {
        made.reason = e.what(); // a factory must not throw; if it does, the seat is unavailable
    }
    if (made.agent) {
        seat->agent_ = std::move(made.agent);
    } else {
        seat->unavailable_ =
            made.reason.empty() ? "no agent of kind '" + seat->spec_.agent + "'" : made.reason;
    }
    seat->update_summary();
    return seat;
}

std::shared_ptr<Seat> Seat::open_fed(
    net::io_context& io,
    SeatSpec spec,
    SeatOptions opt,
    std::unique_ptr<Source> source,
    std::optional<std::chrono::system_clock::time_point> last_activity) {
    auto seat = make(io, std::move(spec), std::move(opt));
    seat->last_activity_ = last_activity;
    seat->source_ = std::move(source);
    SourceHost& host = *seat;
    seat->source_->bind(host, std::shared_ptr<SourceHost>(seat, &host));
    seat->update_summary();
    return seat;
}

std::shared_ptr<Seat>
Seat::open_unavailable(net::io_context& io, SeatSpec spec, SeatOptions opt, std::string reason) {
    auto seat = make(io, std::move(spec), std::move(opt));
    seat->unavailable_ = std::move(reason);
    if (auto win = seat->journal_->open_read_only(seat->opt_.budget)) {
        seat->feed_.replace(seat->spec_.epoch, std::move(*win), /*restart=*/false);
    }
    seat->update_summary();
    return seat;
}

void Seat::close(bool then_remove, std::filesystem::path archive_to) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (closed_) {
        return;
    }
    closed_ = true;
    turns_.queue.clear();
    if (reset_.wanted) {
        reset_.wanted = false; // not begun on disk: the seat closes with its old conversation
        for (auto& d : std::exchange(reset_.done, {})) {
            d(Failure::of(errc::conflict, "the seat was closed before the reset"));
        }
    }
    if (turns_.cancel) {
        turns_.cancel->cancel(
            then_remove ? "cancelled: the seat was deleted" : "interrupted by a hub restart");
        // The agent's rows after this are not kept: the turn is closed here, after what is
        // pending, so the transcript holds a whole turn (TurnClose) that says why it ended.
        if (turns_.failure.empty() && !journal_->not_writable()) {
            for (auto& row : turn_close_.closing_rows(RESTART_TEXT, RESTART_TEXT, spec_.id)) {
                enqueue_frame(Frame::from_row(std::move(row)));
            }
            journal_->flush(/*force=*/true); // the writer runs it even after the io_context stops
        }
    }
    // Synced clean, then (after the last append and sync: the writer runs jobs in order) the
    // folder removed when asked; a mirror has none.
    if (source_) {
        source_->close();
    }
    if (hooks_) {
        hooks_->closed(); // their hooks end with no decision: the terminal's dialog answers
    }
    journal_->close(spec_, then_remove && !mirror(), std::move(archive_to));
    wake_all();
    update_summary();
}

// ---- turns ---------------------------------------------------------------------------------

std::optional<Failure> Seat::not_writable() const {
    if (source_) {
        return source_->refusal(); // fed by someone else: read-only here
    }
    if (closed_) {
        return Failure::of(errc::conflict, "the seat is closed");
    }
    if (!unavailable_.empty()) {
        return Failure::of(errc::conflict, "the seat is unavailable: " + unavailable_);
    }
    return journal_->not_writable();
}

Result<Submitted> Seat::submit(std::string text) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (auto refused = not_writable()) {
        return *refused;
    }
    if (text.empty()) {
        return Failure::of(errc::bad_request, "the prompt is empty");
    }
    if (reset_.wanted) {
        return Failure::of(errc::conflict, "the seat's conversation is being reset; send again");
    }
    if (opt_.limits) {
        if (auto spent = opt_.limits->refusal(spec_.id, utc_day_now())) {
            return Failure::of(errc::conflict, *spent);
        }
    }
    const bool busy = turns_.cancel.has_value();
    if (busy && turns_.queue.size() >= opt_.max_queued_prompts) {
        return Failure::of(
            errc::overloaded,
            "too many prompts queued on this seat (at most "
                + std::to_string(opt_.max_queued_prompts) + ")");
    }
    ++spec_.turns;
    save_meta();
    turns_.queue.push_back(std::move(text));
    if (!busy) {
        start_next_turn();
    }
    update_summary();
    return Submitted{spec_.turns, busy};
}

void Seat::start_next_turn() {
    if (closed_ || turns_.cancel || turns_.queue.empty() || !agent_) {
        return;
    }
    std::string text = std::move(turns_.queue.front());
    turns_.queue.pop_front();
    turns_.running = spec_.turns - turns_.queue.size();
    turns_.failure.clear();
    turns_.started = std::chrono::steady_clock::now();
    turn_close_.start();
    json::object message;
    message["role"] = "user";
    message["content"] = text;
    json::object row;
    row["type"] = "user";
    row["message"] = std::move(message);
    row["uuid"] = new_id("u");
    row["timestamp"] = iso_now();
    row["session_id"] = spec_.id;
    turns_.cancel.emplace();
    push_turn_state(wire::turn_json(turns_.running, "started"));
    enqueue_frame(Frame::from_row(std::move(row)));
    auto sink = std::make_shared<Sink>(weak_from_this(), strand_, turns_.running);
    agent_->start_turn(std::move(text), *turns_.cancel, std::move(sink));
    journal_->sync_periodically(true);
    wake_all();
    update_summary();
}

std::optional<Failure> Seat::check_name(std::string_view name) {
    if (name.empty()) {
        return Failure::of(errc::bad_request, "field 'name' must not be empty");
    }
    if (name.size() > SEAT_NAME_MAX_BYTES) {
        return Failure::of(
            errc::bad_request,
            "field 'name' is over " + std::to_string(SEAT_NAME_MAX_BYTES) + " bytes");
    }
    if (std::any_of(name.begin(), name.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
        })) {
        return Failure::of(errc::bad_request, "field 'name' must not hold control characters");
    }
    return std::nullopt;
}

Result<void> Seat::rename(std::string name) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (auto refused = check_name(name)) {
        return *refused;
    }
    if (source_) {
        return source_->refusal(); // renamed where it is written
    }
    if (closed_) {
        return Failure::of(errc::conflict, "the seat is closed");
    }
    spec_.name = std::move(name);
    save_meta();
    update_summary();
    return {};
}

bool Seat::cancel(const char* why) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!turns_.cancel) {
        return false;
    }
    turns_.cancel->cancel(why);
    return true;
}

void Seat::on_row(std::uint64_t turn, json::object row) {
    if (turn != turns_.running || !turns_.cancel || !turns_.failure.empty() || closed_) {
        return; // a late call, or the turn failed a write: nothing more of it is kept
    }
    if (const auto type = runtime::str_field(row, "type"); !is_frame_type(type)) {
        if (type.empty()) {
            return; // not a row at all
        }
        // A row type this sluice does not know (a newer agent's): kept, forward-compatible, as
        // a system row carrying it whole, so the transcript's frames stay the four kinds.
        json::object wrapped{{"type", "system"}, {"subtype", "agent_row"}};
        wrapped["row_type"] = type;
        wrapped["row"] = std::move(row);
        row = std::move(wrapped);
    }
    // The window keeps the row's JSON only (its object goes): a window costs its wire bytes.
    enqueue_frame(Frame::from_row_compact(std::move(row)));
}

void Seat::on_event(std::uint64_t turn, runtime::AgentEvent event) {
    if (turn != turns_.running || !turns_.cancel || !turns_.failure.empty() || closed_) {
        return; // as on_row
    }
    if (auto* reset = std::get_if<runtime::ConversationReset>(&event)) {
        // The agent replaced its conversation itself (Claude Code's `/clear`): so does the
        // seat, under a new epoch; the rows after this one are the new conversation's.
        auto row = std::move(reset->row);
        row["type"] = "system";
        row["subtype"] = "conversation_reset";
        begin_reset(std::move(row), /*rebuild_agent=*/false, nullptr);
        return;
    }
    if (const auto* state = std::get_if<runtime::SessionStateChanged>(&event)) {
        if (state->requires_action() != agent_requires_action_) {
            agent_requires_action_ = state->requires_action();
            update_summary();
        }
    } else if (const auto* started = std::get_if<runtime::SessionStarted>(&event)) {
        session_started(*started); // its session id and model (seat_serve.cpp)
    }
    note_permission(event);
    enqueue_frame(Frame::from_row_compact(runtime::event_row(std::move(event))));
}

void Seat::note_permission(const runtime::AgentEvent& event) {
    if (permissions_.note(event)) {
        if (const auto* ask = std::get_if<runtime::PermissionRequest>(&event)) {
            tell(permission_notice(*ask));
        }
        update_summary();
    }
}

void Seat::resolve_permission(
    const std::string& id,
    runtime::PermissionResolved::Behavior behavior,
    std::string by,
    const std::string& reason) {
    const runtime::AgentEvent resolved = runtime::PermissionResolved{id, behavior, std::move(by)};
    auto row = std::get<runtime::PermissionResolved>(resolved).row();
    row["session_id"] = spec_.id;
    row["uuid"] = new_id("p");
    row["timestamp"] = iso_now();
    if (!reason.empty()) {
        row["reason"] = reason;
    }
    note_permission(resolved);
    if (source_) {
        // A fed seat's frames are its file's: the hooked prompt's end is an event, not a frame.
        feed_.permission(R"({"row":)" + json::serialize(row) + "}");
        return;
    }
    enqueue_frame(Frame::from_row(std::move(row)));
}

void Seat::withdraw_permissions() {
    while (auto id = permissions_.first_pending()) {
        resolve_permission(*id, runtime::PermissionResolved::Behavior::withdrawn, "sluice");
    }
}

Result<void> Seat::answer_permission(runtime::PermissionAnswer answer, const std::string& by) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (auto refused = permissions_.refuse_answer(answer.request_id)) {
        return *refused;
    }
    const std::string id = answer.request_id;
    const bool allow = answer.allow;
    if (agent_) {
        agent_->answer_permission(std::move(answer));
    } else if (hooks_) {
        hooks_->answered(answer, by); // its waiting hook takes it to Claude Code
    }
    resolve_permission(
        id,
        allow ? runtime::PermissionResolved::Behavior::allow
              : runtime::PermissionResolved::Behavior::deny,
        by);
    wake_all();
    return {};
}

void Seat::on_preview(std::uint64_t turn, StreamEvent ev) {
    if (turn != turns_.running || !turns_.cancel || !turns_.failure.empty() || closed_) {
        return;
    }
    if (journal_->busy()) {
        held_previews_.push(std::move(ev)); // not before the rows it follows
        return;
    }
    publish_preview(ev);
    wake_all();
}

void Seat::on_end(std::uint64_t turn, runtime::TurnEnd end) {
    if (turn != turns_.running || !turns_.cancel) {
        return;
    }
    withdraw_permissions(); // nobody can answer them once the turn is over
    if (journal_->busy()) {
        turns_.pending_end = std::move(end); // ends once its frames are published
        return;
    }
    finish_turn(std::move(end));
}

void Seat::fail_turn(std::string reason) {
    if (!turns_.cancel || !turns_.failure.empty()) {
        return;
    }
    turns_.failure = std::move(reason);
    turns_.cancel->cancel(); // the agent stops and ends the turn; it ends as failed
}

void Seat::finish_turn(runtime::TurnEnd end) {
    turns_.pending_end.reset();
    if (!turns_.failure.empty()) {
        end.state = runtime::TurnEnd::State::failed;
        end.error = turns_.failure;
    }
    if (!turns_.closing && end.state != runtime::TurnEnd::State::ended && turns_.failure.empty()
        && !closed_ && turn_close_.open()) {
        // A cancelled or failed turn the agent left without its result (or with a tool
        // unanswered): close it so every reader sees a whole turn, then end it.
        const std::string why = end.state == runtime::TurnEnd::State::cancelled
                                    ? std::string(CANCELLED_TEXT)
                                    : (end.error.empty() ? std::string("failed") : end.error);
        turns_.closing = true;
        turns_.pending_end = std::move(end);
        for (auto& row : turn_close_.closing_rows(why, why, spec_.id)) {
            enqueue_frame(Frame::from_row(std::move(row)));
        }
        return; // on_appended ends it once the rows are in
    }
    turns_.closing = false;
    const char* state = "ended";
    auto outcome = TurnDurations::Outcome::ended;
    if (end.state == runtime::TurnEnd::State::cancelled) {
        state = "cancelled";
        outcome = TurnDurations::Outcome::cancelled;
    } else if (end.state == runtime::TurnEnd::State::failed) {
        state = "failed";
        outcome = TurnDurations::Outcome::failed;
    }
    const auto took = std::chrono::steady_clock::now() - turns_.started;
    if (opt_.turn_durations) {
        opt_.turn_durations->observe(outcome, took);
    }
    tell_long_turn(outcome, took, end.error);
    push_turn_state(wire::turn_json(turns_.running, state, end.error));
    turns_.cancel.reset();
    agent_requires_action_ = false;
    turns_.failure.clear();
    feed_.clear_partial(); // the turn is closed: nothing of it is open any more
    if (rebuild_for_budget_ && agent_) {
        remake_agent("no agent after a budget change");
    }
    start_next_turn();
    journal_->sync_periodically(turns_.cancel.has_value());
    sync_transcript(/*clean=*/!turns_.cancel); // turn end: durable (and exact when idle)
    wake_all();
    update_summary();
}

// ---- durable before published ----------------------------------------------------------

void Seat::tell_long_turn(
    TurnDurations::Outcome outcome,
    std::chrono::steady_clock::duration took,
    const std::string& error) {
    if (outcome == TurnDurations::Outcome::cancelled || took < opt_.notify_long_turn) {
        return; // a person who cancelled knows; a short turn was watched
    }
    Notice n;
    n.kind = outcome == TurnDurations::Outcome::failed ? Notice::Kind::turn_failed
                                                       : Notice::Kind::turn_ended;
    n.took = std::chrono::duration_cast<std::chrono::milliseconds>(took);
    n.summary = error;
    tell(std::move(n));
}

// In a cluster only the seat's owner tells, once per event (RedisClusterPush tests): a mirror
// (another node's seat, or one this node let go) never does, nor a closed seat (a seat let go is
// closed before its mirror replaces it). A node that takes a seat over tells nothing of what it
// reads: the permissions it tracks are only those its own agent asks (a prompt in the window it
// opens is not one), and the turn left open is closed by the journal on open, not by end_turn.
void Seat::tell(Notice n) {
    if (!opt_.notifier || mirror() || closed_) {
        return;
    }
    n.seat = spec_.id;
    if (n.title.empty()) {
        const auto s = summary();
        n.title = !s.title.empty() ? s.title : spec_.name;
    }
    opt_.notifier->notify(std::move(n));
}

void Seat::save_meta() {
    if (source_) {
        return; // kept where it is written
    }
    journal_->save_meta(spec_);
}

void Seat::enqueue_frame(FramePtr frame) {
    held_previews_.discard_all(/*report=*/false); // superseded by this frame
    turn_close_.observe(*frame);
    journal_->append(std::move(frame));
}

void Seat::on_durable(
    std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) {
    const auto first_new = feed_.window().end();
    if (appended > 0) {
        for (std::size_t i = 0; i < appended; ++i) {
            if (!source_) { // a hosted seat's turn totals (a file source's: UsageScanner)
                count_spend(*batch[i]);
            }
            feed_.append(held_form(std::move(batch[i]))); // oversize: its reference form
        }
        if (opt_.search && !source_) { // durable: the indexer reads them (its own thread)
            opt_.search->changed(
                opt_.dir / "transcript.jsonl",
                SearchTarget{spec_.id, spec_.epoch, "sluice", spec_.cwd, true, false});
        }
        spec_.published = feed_.window().end();
        last_activity_ = std::chrono::system_clock::now();
        feed_.published();
        if (opt_.broker && !released_) {
            opt_.broker->published(*this, first_new); // durable and published: to the cluster
        }
    }
    if (ec) {
        held_previews_.discard_all(/*report=*/false); // nothing after a failed frame is shown
        fail_turn(journal_->degraded());
    }
    if (reset_.wanted && !journal_->appending()) {
        run_reset(); // the old epoch's frames are all in: the epoch changes now
    }
    if (!journal_->busy()) {
        flush_held_previews();
        if (turns_.pending_end) {
            finish_turn(std::move(*turns_.pending_end));
        }
    }
    wake_all();
    update_summary();
}

void Seat::publish_preview(const StreamEvent& ev) {
    if (opt_.broker && !source_ && !released_) {
        opt_.broker->preview(*this, feed_.window().end(), feed_.preview_offset(), ev);
    }
    feed_.preview(ev);
}

void Seat::flush_held_previews() {
    // What the hold lane dropped (not superseded: lost) is every viewer's loss, marked in-band.
    if (const auto lost = held_previews_.take_unreported_dropped(); lost > 0) {
        feed_.lost(lost);
    }
    while (auto ev = held_previews_.pop()) {
        publish_preview(*ev);
    }
}

void Seat::push_turn_state(const std::string& data) {
    const auto tag = feed_.window().end() + journal_->queued(); // before the next frame
    feed_.turn_state(tag, data);
    if (opt_.broker && !released_) {
        opt_.broker->turn_state(*this, tag, data);
    }
}

} // namespace sluice::hub
