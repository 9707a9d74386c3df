// Seat, the callers' side: its viewers (attach/detach, stepping through the subscriber, history
// pages, whole frames, the summary) and the owner's controls over its conversation (agent
// settings, and a reset to a new epoch).
#include "hook_bridge.hpp"
#include "ids.hpp"

#include <sluice/core/assert.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/agent_kinds.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/usage.hpp>
#include <sluice/hub/wire.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <utility>

namespace sluice::hub {

namespace json = boost::json;

void Seat::attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    feed_.attach(sub, std::move(last)); // waits in the feed while it is not ready
    if (source_ && !feed_.ready()) {
        source_->wanted(); // a file opens (on the writer), a mirror asks to be fed
    }
    update_summary();
}

void Seat::detach(const std::shared_ptr<Subscriber>& sub) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    feed_.detach(sub);
    if (sub->cancels_on_disconnect() && turns_.cancel) {
        cancel("cancelled: the caller disconnected"); // it was the turn's caller: nobody waits for
                                                      // the turn any more
    }
    update_summary();
}

FeedHead Seat::head() const noexcept {
    FeedHead h{
        .running = turns_.cancel.has_value(),
        .turn = turns_.cancel ? turns_.running : spec_.turns,
        .permissions = permissions_.json(),
        .partial_open = turns_.cancel.has_value()};
    h.waiting = permissions_.pending() > 0 || agent_requires_action_;
    if (source_) {
        source_->head(h); // a mirror's turn is its owner's
    }
    if (hooks_ && hooks_->waiting()) {
        h.waiting = true; // a terminal session's prompt, or its Notification
    }
    return h;
}

void Seat::collect(Subscriber& sub, std::vector<OutEvent>& out) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (feed_.collect(sub, out, head())) {
        update_summary(); // the loss just reported shows in the seat's figures at once
    }
}

void Seat::history(
    std::optional<std::uint64_t> before, std::size_t turns, const HistoryDone& done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (source_ && source_->wait_open([self = shared_from_this(), before, turns, done] {
            self->history(before, turns, done);
        })) {
        return; // answered once its file is open
    }
    turns = std::clamp<std::size_t>(turns, 1, SUBSCRIBE_TURNS);
    const std::uint64_t at = before.value_or(feed_.window().end());
    if (at > feed_.window().end()) {
        done(Failure::of(
            errc::bad_request,
            "'before' is past the newest frame (" + std::to_string(feed_.window().end()) + ")"));
        return;
    }
    if (auto page = feed_.history(before, at, turns)) {
        done(std::move(*page));
        return;
    }
    // Below the window floor: read from the transcript (O(page)) on the writer, in order with
    // the appends.
    const bool queued =
        journal_->read_page(at, turns, [done](Result<std::shared_ptr<const std::string>> page) {
            if (!page) {
                done(page.error());
            } else {
                done(HistoryPage{std::move(*page)});
            }
        });
    if (!queued) {
        done(Failure::of(errc::overloaded, "the disk queue is full; try again"));
    }
}

Result<std::shared_ptr<const std::string>>
Seat::frame_text(std::uint64_t seq, const std::optional<std::string>& epoch) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (epoch && *epoch != spec_.epoch) {
        return Failure::of(
            errc::conflict,
            "frame " + std::to_string(seq) + " of epoch " + *epoch
                + " is not this seat's any more: its conversation was replaced (epoch "
                + spec_.epoch + " now)");
    }
    if (source_ && source_->wait_open(nullptr)) {
        return Failure::of(errc::overloaded, "the session file is being opened; try again");
    }
    if (seq >= feed_.window().end()) {
        return Failure::of(
            errc::not_found,
            "no frame " + std::to_string(seq) + " yet (" + std::to_string(feed_.window().end())
                + " published)");
    }
    return journal_->frame_text(seq);
}

void Seat::update_summary() {
    SeatSummary s;
    s.id = spec_.id;
    s.name = spec_.name;
    s.agent = spec_.agent;
    s.epoch = spec_.epoch;
    s.model = spec_.model;
    s.permission_mode = spec_.permission_mode;
    s.cmd = spec_.cmd;
    s.budget_usd = spec_.budget_usd;
    s.spent_usd = spec_.spend.total_usd;
    if (!unavailable_.empty()) {
        s.state = SeatState::unavailable;
        s.reason = unavailable_;
    } else if (turns_.cancel) {
        s.state = turns_.queue.empty() ? SeatState::running : SeatState::queued;
        if (permissions_.pending() > 0 || agent_requires_action_) {
            s.state = SeatState::waiting;
        }
    }
    s.pending_permissions = permissions_.pending();
    if (!journal_->degraded().empty() || !journal_->read_only().empty()) {
        s.degraded = true;
        if (s.reason.empty()) {
            s.reason = !journal_->degraded().empty() ? journal_->degraded() : journal_->read_only();
        }
        if (s.state != SeatState::unavailable && !turns_.cancel) {
            s.state = SeatState::degraded; // a running turn shows running until it ends
        }
    }
    s.write_errors = journal_->write_errors();
    s.warnings = journal_->warnings();
    s.turns = spec_.turns;
    s.frames = feed_.window().end();
    s.window_first = feed_.window().first();
    s.window_frames = feed_.window().size();
    s.window_bytes = feed_.window().bytes();
    s.preview_dropped_bytes = feed_.preview_dropped_bytes();
    s.resyncs = feed_.resyncs();
    s.subscribers = feed_.subscribers();
    s.queued = turns_.queue.size();
    s.last_activity = last_activity_;
    s.session_id = spec_.session_id; // a claude seat's: the session it resumes
    s.origin = 0;                    // a hosted seat numbers its epoch from 0
    if (source_) {
        source_->summarize(s); // a mirror's owner's figures, a file's listing
    }
    if (hooks_) {
        s.hooked = hooks_->hooked();
        if (hooks_->waiting()) {
            s.state = SeatState::waiting;
        }
    }
    std::lock_guard lock(summary_mu_);
    summary_ = std::move(s);
}

SeatSummary Seat::summary() const {
    std::lock_guard lock(summary_mu_);
    return summary_;
}

// ---- settings ------------------------------------------------------------------------------

void Seat::change(std::optional<std::string> name, runtime::AgentSettings settings, Done done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (name) {
        if (auto refused = check_name(*name)) {
            done(*refused); // nothing changed: all of the request, or none
            return;
        }
    }
    if (!settings.permission_mode && !settings.model) {
        done(name ? rename(std::move(*name)) : Result<void>{});
        return;
    }
    change_settings(
        std::move(settings),
        [self = shared_from_this(), name = std::move(name), done = std::move(done)](
            Result<void> r) mutable {
            if (r && name) {
                r = self->rename(std::move(*name));
            }
            done(std::move(r));
        });
}

void Seat::change_settings(runtime::AgentSettings settings, Done done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!settings.permission_mode && !settings.model) {
        done(Failure::of(errc::bad_request, "nothing to change"));
        return;
    }
    if (settings.permission_mode && spec_.agent == "codex") {
        // Codex's approval policy; "default": the one its config.toml names.
        if (*settings.permission_mode != "default"
            && !runtime::codex::is_approval_policy(*settings.permission_mode)) {
            done(Failure::of(
                errc::bad_request,
                R"(field 'permission_mode' of agent "codex" is its approval policy, one of )"
                    + std::string(runtime::codex::APPROVAL_POLICIES) + ", default"));
            return;
        }
    } else if (
        settings.permission_mode
        && !runtime::stream_json::is_permission_mode(*settings.permission_mode)) {
        done(Failure::of(
            errc::bad_request,
            "field 'permission_mode' must be one of "
                + std::string(runtime::stream_json::PERMISSION_MODES)));
        return;
    }
    if (settings.model
        && (settings.model->empty() || settings.model->size() > SEAT_MODEL_MAX_BYTES)) {
        done(Failure::of(
            errc::bad_request,
            "field 'model' must be a model name of 1 to " + std::to_string(SEAT_MODEL_MAX_BYTES)
                + R"( bytes ("default": the agent's default))"));
        return;
    }
    if (source_) {
        done(source_->refusal()); // changed where it is written
        return;
    }
    if (closed_) {
        done(Failure::of(errc::conflict, "the seat is closed"));
        return;
    }
    if (!takes_agent_settings(spec_.agent)) {
        done(Failure::of(
            errc::conflict,
            R"(fields 'permission_mode' and 'model' can change on agents "claude" and )"
            R"("codex" only (this seat: ")"
                + spec_.agent + "\")"));
        return;
    }
    if (!agent_ || !agent_->takes_settings()) {
        done(Failure::of(
            errc::conflict,
            "the seat's agent is not running here"
                + (unavailable_.empty() ? std::string() : ": " + unavailable_)));
        return;
    }
    // The agent answers on its executor, which is this strand (the factory's contract); a
    // late answer for a closed seat changes nothing.
    agent_->apply_settings(
        settings,
        [weak = weak_from_this(), settings, done = std::move(done)](
            const runtime::Agent::SettingsAnswer& answer) {
            if (auto self = weak.lock()) {
                self->settings_answered(settings, answer, done);
            } else {
                done(Failure::of(errc::conflict, "the seat is gone"));
            }
        });
}

void Seat::settings_answered(
    const runtime::AgentSettings& settings,
    const runtime::Agent::SettingsAnswer& answer,
    const Done& done) {
    if (!answer.error.empty()) {
        done(Failure::of(errc::conflict, "the agent refused the change: " + answer.error));
        return;
    }
    if (settings.permission_mode) {
        spec_.permission_mode = runtime::AgentSettings::kept(*settings.permission_mode);
    }
    if (settings.model) {
        // What the agent says it uses wins over the name asked for (Claude Code remaps some);
        // "default" stays no model of the seat's own. With no process running nobody could
        // say: the next process's `system init` row corrects it (session_started).
        spec_.model = runtime::AgentSettings::kept(*settings.model);
        if (!spec_.model.empty() && !answer.model.empty()) {
            spec_.model = answer.model;
        }
    }
    save_meta();
    update_summary();
    done({});
}

void Seat::session_started(const runtime::SessionStarted& started) {
    if (!hosts_cli(spec_.agent)) {
        return;
    }
    bool changed = false;
    if (started.session_id != spec_.session_id) {
        spec_.session_id = started.session_id; // a restarted agent resumes it (meta.json)
        changed = true;
    }
    // The model Claude Code says this process uses (its `system init` row): a name it remapped
    // at start is shown as what runs. A seat on the agent's default keeps no model of its own.
    const auto* model = started.row.if_contains("model");
    if (!spec_.model.empty() && model != nullptr && model->is_string()
        && !model->get_string().empty() && std::string_view(model->get_string()) != spec_.model) {
        spec_.model = std::string(model->get_string());
        changed = true;
        update_summary();
    }
    if (changed) {
        save_meta();
    }
}

// ---- reset ---------------------------------------------------------------------------------

std::optional<Failure> Seat::reset_refused() const {
    if (auto refused = not_writable()) {
        return refused;
    }
    if (reset_.wanted || reset_.writing) {
        return Failure::of(errc::conflict, "the seat's conversation is being reset already");
    }
    if (turns_.cancel || !turns_.queue.empty()) {
        return Failure::of(
            errc::conflict,
            "a turn is running (or prompts are queued): cancel it first "
            "(POST /v1/seats/"
                + spec_.id + "/cancel), then reset");
    }
    return std::nullopt;
}

void Seat::reset(Done done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (auto refused = reset_refused()) {
        done(std::move(*refused));
        return;
    }
    json::object row{{"type", "system"}, {"subtype", "conversation_reset"}, {"trigger", "api"}};
    begin_reset(std::move(row), /*rebuild_agent=*/true, std::move(done));
}

void Seat::begin_reset(json::object row, bool rebuild_agent, Done done) {
    if (done) {
        reset_.done.push_back(std::move(done));
    }
    if (reset_.wanted) {
        return; // one reset at a time; a second `/clear` row before it ran is the same reset
    }
    reset_.wanted = true;
    reset_.rebuild_agent = rebuild_agent;
    reset_.row = std::move(row);
    // The old session is over now: a session id the agent names after this is the new one's.
    spec_.session_id.clear();
    held_previews_.discard_all(/*report=*/false); // the old conversation's
    journal_->flush(/*force=*/true); // what is queued is the old epoch's: in before the reset
    journal_->hold(true);            // what comes next is the new epoch's: after it
    if (!journal_->appending()) {
        run_reset();
    }
}

void Seat::run_reset() {
    reset_.wanted = false;
    journal_->hold(false);
    if (!journal_->degraded().empty() || !journal_->store()) {
        // A write of the old epoch failed: nothing can be archived safely; the seat stays.
        const auto why =
            journal_->degraded().empty() ? std::string("no transcript") : journal_->degraded();
        for (auto& d : std::exchange(reset_.done, {})) {
            d(Failure::of(errc::conflict, "cannot reset the seat: " + why));
        }
        return;
    }
    const std::string old = spec_.epoch;
    const std::string archived = "transcript." + old + ".jsonl";
    spec_.epoch = new_id("e");
    spec_.published = 0;
    spec_.unsynced = false;
    // Turn numbers go on counting (`turns`): a turn event names one prompt of the seat's life,
    // so a client's wait for "turn N ended" never matches a turn of the old conversation.
    spdlog::info(
        "seat {}: conversation reset ({}): epoch {} becomes {}, transcript kept as {}",
        spec_.id,
        runtime::str_field(reset_.row, "trigger"),
        old,
        spec_.epoch,
        archived);
    // The new conversation, empty, for every viewer at once: each starts again with
    // `connected` of the new epoch (its Last-Event-ID of the old one would not resume).
    feed_.replace(spec_.epoch, Window(opt_.budget), /*restart=*/true);
    permissions_.forget_pending(); // none wait (the reset came between prompts)
    turn_close_ = TurnClose{};
    if (turns_.cancel) {
        turn_close_.start(); // the agent's `/clear` turn goes on in the new conversation
    }
    // Its first frame says what happened, ahead of what the agent wrote since (pending).
    auto row = std::move(reset_.row);
    row["previous_epoch"] = old;
    row["archived"] = archived;
    if (!row.contains("uuid")) {
        row["uuid"] = new_id("r");
    }
    if (!row.contains("timestamp")) {
        row["timestamp"] = iso_now();
    }
    row["session_id"] = spec_.id;
    auto marker = Frame::from_row(std::move(row));
    turn_close_.observe(*marker);
    journal_->prepend(std::move(marker));
    // On the writer, before any frame of the new epoch (the writer runs jobs in order): the
    // old transcript synced and renamed (never deleted), a new one, then meta.json (the commit:
    // a crash before it is completed on open, see Journal::open), the unsynced marker removed.
    reset_.writing = true;
    journal_->archive(
        spec_,
        archived,
        [weak = weak_from_this()](boost::system::error_code ec, const std::string& why) {
            if (auto self = weak.lock()) {
                self->reset_written(ec, why);
            }
        });
    if (reset_.rebuild_agent && agent_) {
        // The new agent has no history and no session to resume.
        remake_agent("no agent after the reset");
    }
    journal_->flush();
    wake_all();
    update_summary();
}

void Seat::reset_written(boost::system::error_code ec, const std::string& why) {
    reset_.writing = false; // the journal is degraded when it failed
    for (auto& d : std::exchange(reset_.done, {})) {
        if (ec) {
            d(Failure::of(write_errc(ec), "conversation reset failed: " + why));
        } else {
            d({});
        }
    }
    update_summary();
}

// ---- Claude Code's hooks: the seat's side (the prompts themselves: HookBridge) -------------

Result<std::string> Seat::hook(const HookCall& call) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!foreign()) {
        return Failure::of(
            errc::conflict, "seat " + spec_.id + " is not a Claude Code session on this machine");
    }
    if (closed_) {
        return Failure::of(errc::conflict, "the seat is closed");
    }
    if (!hooks_) {
        // Held weakly by the bridge: the seat owns it (the aliasing form names the private base).
        hooks_ = std::make_shared<HookBridge>(
            std::shared_ptr<HookHost>(shared_from_this(), static_cast<HookHost*>(this)),
            net::any_io_executor(strand_),
            feed_);
    }
    auto id = hooks_->call(call);
    // Follow the file: opened for a prompt (its tool rows say when the terminal answered),
    // else read for new rows (also where no projects watch sees it change).
    if (call.event != HookEvent::permission_request || !source_->wait_open(nullptr)) {
        source_->changed();
    }
    update_summary();
    return id;
}

void Seat::hook_wait(const std::string& request_id, std::chrono::milliseconds wait, HookDone done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!hooks_) {
        done(Failure::of(errc::not_found, "no such hooked prompt: " + request_id));
        return;
    }
    hooks_->wait(request_id, wait, std::move(done));
}

void Seat::hooks_seen() {
    if (hooks_) {
        hooks_->seen();
    }
}

void Seat::show_hooked(runtime::PermissionRequest ask) {
    auto row = ask.row();
    row["session_id"] = spec_.id;
    row["uuid"] = new_id("p");
    row["timestamp"] = iso_now();
    note_permission(runtime::AgentEvent{std::move(ask)});
    feed_.permission(R"({"row":)" + json::serialize(row) + "}");
    wake_all();
}

void Seat::withdraw_hooked(const std::string& id, std::string by, const std::string& reason) {
    resolve_permission(id, runtime::PermissionResolved::Behavior::withdrawn, std::move(by), reason);
    wake_all();
    update_summary(); // a prompt its timer closed: no longer waiting
}

void Seat::on_write_failed() {
    if (!told_degraded_ && !journal_->degraded().empty()) {
        told_degraded_ = true;
        Notice n;
        n.kind = Notice::Kind::degraded;
        n.summary = journal_->degraded();
        tell(std::move(n));
    }
    update_summary();
}

// ---- budgets -------------------------------------------------------------------------------

Result<void> Seat::set_budget(std::optional<double> usd) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (usd && !(*usd >= 0)) {
        return Failure::of(errc::bad_request, "field 'budget_usd' must be an amount of 0 or more");
    }
    if (source_) {
        return source_->refusal(); // its cost is not this hub's to limit
    }
    if (closed_) {
        return Failure::of(errc::conflict, "the seat is closed");
    }
    spec_.budget_usd = usd;
    if (opt_.limits) {
        opt_.limits->note(spec_.id, spec_.budget_usd, spec_.spend);
    }
    save_meta();
    if (spec_.agent == "claude" && agent_) {
        // Claude Code keeps to the --max-budget-usd it was started with: a new one needs a new
        // process (the session resumes), at once when idle, else when the turn ends.
        if (turns_.cancel) {
            rebuild_for_budget_ = true;
        } else {
            remake_agent("no agent after a budget change");
        }
    }
    update_summary();
    return {};
}

void Seat::count_spend(const Frame& f) {
    const double cost = count_result_frame(opt_.usage.get(), spec_.id, spec_.model, spec_.cwd, f);
    if (cost <= 0 || !opt_.limits) {
        return;
    }
    auto u = opt_.limits->add(spec_.id, cost, utc_day_now());
    spec_.spend = u.spend;
    save_meta();
    if (u.notice) {
        // After the row that crossed it (posted: this runs inside a durable batch's handling).
        // …and to the people who asked to hear (push, webhooks), as the notice itself says it.
        Notice n;
        n.kind = Notice::Kind::budget;
        n.summary = *u.notice;
        tell(std::move(n));
        auto row = budget_notice_row(spec_.id, *u.notice, spec_.spend.total_usd, spec_.budget_usd);
        boost::asio::post(strand_, [self = shared_from_this(), row = std::move(row)]() mutable {
            if (!self->closed_ && !self->not_writable()) {
                self->enqueue_frame(Frame::from_row(std::move(row)));
            }
        });
    }
}

void Seat::remake_agent(const char* none) {
    rebuild_for_budget_ = false;
    if (opt_.limits) {
        spec_.budget_left = opt_.limits->left(spec_.id, utc_day_now());
    }
    agent_.reset(); // its process: stdin closed, SIGTERM, SIGKILL after a grace
    AgentOrReason made;
    try {
        made = opt_.make_agent(spec_, {}, strand_);
    } catch (const std::exception& e) {
        made.reason = e.what();
    }
    agent_ = std::move(made.agent);
    if (!agent_) {
        unavailable_ = made.reason.empty() ? none : made.reason;
    }
}

} // namespace sluice::hub
