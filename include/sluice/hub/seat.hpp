// Seat: one conversation as its viewers see it — hosted (its agent, turns, journal) or fed by a
// source (a session file someone else writes, another node's seat) — over one feed.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/core/cancel.hpp>
#include <sluice/core/error.hpp>
#include <sluice/core/relay_queue.hpp>
#include <sluice/hub/async.hpp>
#include <sluice/hub/broker.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/failure.hpp>
#include <sluice/hub/feed.hpp>
#include <sluice/hub/hooks.hpp>
#include <sluice/hub/journal.hpp>
#include <sluice/hub/notify.hpp>
#include <sluice/hub/permission_prompts.hpp>
#include <sluice/hub/seat_meta.hpp>
#include <sluice/hub/seat_types.hpp>
#include <sluice/hub/source.hpp>
#include <sluice/hub/spend_limits.hpp>
#include <sluice/hub/subscriber.hpp>
#include <sluice/hub/turn_close.hpp>
#include <sluice/hub/turn_durations.hpp>
#include <sluice/hub/usage_ledger.hpp>
#include <sluice/hub/writer.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/container/deque.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sluice::hub {

/// One conversation. A hosted seat's semantic output becomes frames: appended to the transcript on
/// the writer first, published (held in the window, numbered `seq` within the seat's `epoch`) only
/// once that append completed, in order. Previews go to live subscribers only, each through its own
/// bounded lane; a preview that arrives while rows are still being appended is held in the
/// seat (one lane, SUBSCRIBER_PREVIEW_LIMITS) and shown once those rows are published, or
/// discarded if a newer row supersedes it first (the row carries its content). One turn at a
/// time; later prompts queue FIFO. A failed append is never published: the turn ends `failed`
/// with the reason and the seat is marked degraded. A fed seat (`open_fed`) has no agent: its
/// Source fills its feed, and everything written to it is refused with the source's reason.
/// "Unavailable" is a state, not a kind: a hosted seat without an agent, or a mirror whose owner
/// is gone.
///
/// @par Thread safety
/// Every member but `summary`, `strand`, `id`, `dir`, `source`, `foreign`, `mirror` and `owner`
/// is confined to `strand()`. The agent
/// calls its TurnSink on the strand (the executor the seat gave it); a call from another
/// thread is dispatched there.
class Seat : public std::enable_shared_from_this<Seat>,
             public JournalEvents,
             private SourceHost,
             private HookHost {
public:
    using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;

    /// Opens the seat in `opt.dir` (which must exist), restoring its window from the
    /// transcript, and builds its agent. A factory with no agent gives an `unavailable` seat,
    /// not an error. Before anything is served: a turn a crash left open is closed
    /// (TurnClose rows, "interrupted"); damaged lines are skipped and listed as warnings (the
    /// index rebuilt); when the transcript may hold fewer frames than were published (the
    /// persisted high-water mark, or unsynced frames and a reboot since), the epoch changes so
    /// every client resyncs. A read-only data directory opens the seat `degraded`, read-only.
    /// @return the reason when the transcript cannot be opened or read.
    /// @par Thread safety
    /// Any thread; blocking (opens files): call at creation or restore only.
    static Result<std::shared_ptr<Seat>>
    open(boost::asio::io_context& io, SeatSpec spec, SeatOptions opt);

    /// A seat listed as `unavailable` with `reason`: no agent; its history is read from the
    /// transcript when that opens; prompts are refused with the reason; it can be removed.
    static std::shared_ptr<Seat> open_unavailable(
        boost::asio::io_context& io, SeatSpec spec, SeatOptions opt, std::string reason);

    /// A seat fed by `source` (which it owns): a foreign session file (hub's FileSource), a
    /// mirror of another node's seat (cluster::MirrorSource). Its viewers wait until the source
    /// has filled its feed. `last_activity`: when it was last seen written, if known.
    static std::shared_ptr<Seat> open_fed(
        boost::asio::io_context& io,
        SeatSpec spec,
        SeatOptions opt,
        std::unique_ptr<Source> source,
        std::optional<std::chrono::system_clock::time_point> last_activity = std::nullopt);

    /// Its source (null: a hosted seat). Fixed at creation: safe from any thread; its members
    /// run on the strand.
    [[nodiscard]] Source* source() const noexcept { return source_.get(); }

    /// Whether this seat serves a foreign session file (read-only). Safe from any thread.
    [[nodiscard]] bool foreign() const noexcept {
        return source_ && source_->kind() == Source::Kind::file;
    }

    /// Whether this is a mirror of another node's seat. Safe from any thread.
    [[nodiscard]] bool mirror() const noexcept {
        return source_ && source_->kind() == Source::Kind::mirror;
    }

    /// The node that owns the seat (empty: this one). Safe from any thread.
    [[nodiscard]] std::string owner() const { return source_ ? source_->owner() : std::string(); }

    /// What its source follows changed (a watch saw a foreign file change). On the strand.
    void source_changed() {
        if (source_ && !closed_) {
            source_->changed();
        }
    }

    ~Seat() override;
    Seat(const Seat&) = delete;
    Seat& operator=(const Seat&) = delete;
    Seat(Seat&&) = delete;
    Seat& operator=(Seat&&) = delete;

    /// The strand every confined member runs on.
    [[nodiscard]] strand_type& strand() noexcept { return strand_; }

    /// The seat's id.
    [[nodiscard]] const std::string& id() const noexcept { return spec_.id; }

    /// The seat's folder.
    [[nodiscard]] const std::filesystem::path& dir() const noexcept { return opt_.dir; }

    /// A snapshot. Safe from any thread.
    [[nodiscard]] SeatSummary summary() const;

    /// Accepts a prompt: starts a turn, or queues it. Failures name the reason: conflict (seat
    /// closed, or unavailable and why), overloaded (queue full, with the limit), bad_request.
    Result<Submitted> submit(std::string text);
    /// Cancels the running turn (queued prompts stay queued). Returns whether one was running.
    /// @param why who stopped it, for the turn's record (a string literal): the result row and
    ///   the `turn` event say it; what the answer had streamed is kept, marked interrupted.
    bool cancel(const char* why = "cancelled by the user");

    /// Renames the seat (its metadata is rewritten on the writer). Refused (bad_request) when
    /// empty, not UTF-8-safe printable or over SEAT_NAME_MAX_BYTES.
    Result<void> rename(std::string name);

    /// Sets the seat's budget (none: no limit of its own; the hub's daily budget still holds).
    /// A claude seat's agent starts again, when idle, with `--max-budget-usd` set to what is
    /// left (its session resumed). Refused (conflict) for a seat fed by a file or closed;
    /// bad_request for an amount below 0.
    Result<void> set_budget(std::optional<double> usd);

    /// Why `name` cannot be a seat's name (empty, control characters, over
    /// SEAT_NAME_MAX_BYTES), or nothing when it can.
    [[nodiscard]] static std::optional<Failure> check_name(std::string_view name);

    /// What `change_settings` and `reset` hand back, on the strand.
    using Done = std::function<void(Result<void>)>;

    /// Changes a claude seat's permission mode and/or model (Claude Code's set_permission_mode
    /// / set_model). A running agent process is asked first and `done` gets its answer; only a
    /// change the agent took (or one for a process not running: it applies at the next start)
    /// is kept in the metadata, so every later start of its agent uses it. "default" returns
    /// either to Claude Code's default. Refused: bad_request for a mode Claude Code does not
    /// know or a model name over SEAT_MODEL_MAX_BYTES; conflict for other agents, foreign,
    /// unavailable or closed seats, and when the agent refuses (its words: e.g.
    /// bypassPermissions on a session not launched for it); nothing is changed then.
    void change_settings(runtime::AgentSettings settings, Done done);

    /// Renames the seat and/or changes its agent's settings, all or none: the name is checked
    /// first, the settings asked of the agent (as `change_settings`), the rename made once the
    /// agent took them. `done` gets the first refusal.
    void change(std::optional<std::string> name, runtime::AgentSettings settings, Done done);

    /// Replaces the seat's conversation with an empty one under a new epoch (the owner's
    /// `POST /v1/seats/{id}/reset`). Refused (conflict) while a turn runs or prompts are queued
    /// (cancel first), and for foreign, mirror, closed, unavailable, read-only or degraded
    /// seats. The old transcript is kept, renamed `transcript.<old epoch>.jsonl`; meta.json
    /// gets the new epoch and forgets the agent's session (the next agent process starts
    /// without `--resume`); the agent is rebuilt with no history (its process ends). Every
    /// subscriber starts again with `connected` (recovered:false) of the new epoch, whose first
    /// frame is a `system/conversation_reset` row `{trigger, previous_epoch, archived}`.
    /// `done` runs once the reset is on disk (or failed: the seat is then degraded).
    void reset(Done done);

    /// Adds a subscriber. `last` is a Last-Event-ID ("<epoch>:<seq>"): if it is still in the
    /// window the subscriber resumes after it, otherwise it starts with `connected`.
    void attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last);
    /// Removes a subscriber; one attached with `cancel_on_disconnect` cancels the running turn.
    void detach(const std::shared_ptr<Subscriber>& sub);
    /// Appends the subscriber's next events to `out` (nothing when it is up to date).
    void collect(Subscriber& sub, std::vector<OutEvent>& out);

    /// Answers a pending permission prompt of the running turn: the first valid answer wins.
    /// It is forwarded to the agent, and a `system/permission_resolved` frame
    /// `{request_id, behavior, by}` goes to everyone. Failures: not_found (no such prompt),
    /// conflict (already resolved: how and by whom).
    Result<void> answer_permission(runtime::PermissionAnswer answer, const std::string& by);

    /// The pending permission prompts, a JSON array of their rows.
    [[nodiscard]] std::string permissions_json() const { return permissions_.json(); }

    /// Whether the seat is closed (its subscribers' streams should end).
    [[nodiscard]] bool closed() const noexcept override { return closed_; }

    /// What `history` hands back.
    using HistoryDone = std::function<void(Result<HistoryPage>)>;

    /// A page of whole turns before `before` (default: the newest), at most `turns` turns,
    /// handed to `done` on the strand: at once from the window, or — below its floor — read from
    /// the transcript on the writer (the disk is never read on an I/O thread). Failures:
    /// bad_request (past the newest frame), overloaded (the writer queue is full), the read's.
    void history(std::optional<std::uint64_t> before, std::size_t turns, const HistoryDone& done);

    /// The whole frame at `seq`, as appended to the transcript (an oversize frame's full form;
    /// the window holds its reference form), shared with every client fetching the same frame
    /// (the last one fetched is kept). On the seat's strand. Errors: not_found (no such frame
    /// yet), io_error.
    /// With `epoch` (the client's, from the event id it saw `seq` in): a seat that has moved to
    /// another epoch refuses (conflict) instead of another conversation's frame at that position.
    Result<std::shared_ptr<const std::string>>
    frame_text(std::uint64_t seq, const std::optional<std::string>& epoch = std::nullopt);

    // ---- asynchronous forms: what the server awaits ----------------------------------------
    // Each runs its operation above on the strand and completes `token` on the caller's
    // executor (Asio's completion tokens: a route `co_await`s
    // `seat->async_submit(std::move(text), use_awaitable)`; under GCC 12 it awaits a named
    // operation, never a temporary built in the co_await expression).

    /// `submit`: void(Result<Submitted>).
    template <class Token>
    auto async_submit(std::string text, Token&& token) {
        return on_strand<Result<Submitted>>(
            [text = std::move(text)](Seat& s, const auto& done) mutable {
                done(s.submit(std::move(text)));
            },
            std::forward<Token>(token));
    }

    /// `cancel` (by the user): void(bool), whether a turn was running.
    template <class Token>
    auto async_cancel(Token&& token) {
        return on_strand<bool>(
            [](Seat& s, const auto& done) { done(s.cancel()); }, std::forward<Token>(token));
    }

    /// `permissions_json`: void(std::string).
    template <class Token>
    auto async_permissions(Token&& token) {
        return on_strand<std::string>(
            [](Seat& s, const auto& done) { done(s.permissions_json()); },
            std::forward<Token>(token));
    }

    /// `answer_permission`: void(Result<void>).
    template <class Token>
    auto async_answer_permission(runtime::PermissionAnswer answer, std::string by, Token&& token) {
        return on_strand<Result<void>>(
            [answer = std::move(answer), by = std::move(by)](Seat& s, const auto& done) mutable {
                done(s.answer_permission(std::move(answer), by));
            },
            std::forward<Token>(token));
    }

    /// `history`: void(Result<HistoryPage>), read below the window on the writer if it must.
    template <class Token>
    auto async_history(std::optional<std::uint64_t> before, std::size_t turns, Token&& token) {
        return on_strand<Result<HistoryPage>>(
            [before, turns](Seat& s, const auto& done) { s.history(before, turns, done); },
            std::forward<Token>(token));
    }

    /// `frame_text`: void(Result<std::shared_ptr<const std::string>>).
    template <class Token>
    auto async_frame_text(std::uint64_t seq, std::optional<std::string> epoch, Token&& token) {
        return on_strand<Result<std::shared_ptr<const std::string>>>(
            [seq, epoch = std::move(epoch)](Seat& s, const auto& done) {
                done(s.frame_text(seq, epoch));
            },
            std::forward<Token>(token));
    }

    /// `change`: void(Result<void>), once the agent answered.
    template <class Token>
    auto
    async_change(std::optional<std::string> name, runtime::AgentSettings settings, Token&& token) {
        return on_strand<Result<void>>(
            [name = std::move(name),
             settings = std::move(settings)](Seat& s, const auto& done) mutable {
                s.change(std::move(name), std::move(settings), done);
            },
            std::forward<Token>(token));
    }

    /// `set_budget`: void(Result<void>).
    template <class Token>
    auto async_set_budget(std::optional<double> usd, Token&& token) {
        return on_strand<Result<void>>(
            [usd](Seat& s, const auto& done) { done(s.set_budget(usd)); },
            std::forward<Token>(token));
    }

    /// `reset`: void(Result<void>), once it is on disk.
    template <class Token>
    auto async_reset(Token&& token) {
        return on_strand<Result<void>>(
            [](Seat& s, const auto& done) { s.reset(done); }, std::forward<Token>(token));
    }

    // ---- Claude Code's hooks: a terminal session's seat (seat_serve.cpp, HookBridge) ---------

    /// A hook of this foreign seat's session reported `call`: the seat is `hooked` (until
    /// SessionEnd). A PermissionRequest becomes a pending prompt (a `permission` event
    /// `{"row":{permission_request, hooked, cwd}}` to every viewer, in `connected`'s
    /// `permissions`; the seat `waiting`) answered by `answer_permission` or closed when the
    /// transcript shows the tool answered in the terminal, at Stop, PostToolUse or SessionEnd,
    /// when its hook stops asking (HOOK_GONE_AFTER) or at its timeout. Notification marks the
    /// seat `waiting` until its next row or Stop. @return the prompt's request id
    /// (PermissionRequest), else "". Refused (conflict) for a seat that is not a foreign session's,
    /// or closed.
    Result<std::string> hook(const HookCall& call);

    /// What `hook_wait` hands back, on the strand.
    using HookDone = std::function<void(Result<HookOutcome>)>;

    /// Waits at most `wait` for hooked prompt `request_id` to be answered or closed: `done` gets
    /// its outcome (once; a later wait is not_found), or `pending` when `wait` passed first.
    /// not_found for a prompt this seat does not know (or whose outcome was fetched already).
    void hook_wait(const std::string& request_id, std::chrono::milliseconds wait, HookDone done);

    /// `hook`: void(Result<std::string>).
    template <class Token>
    auto async_hook(HookCall call, Token&& token) {
        return on_strand<Result<std::string>>(
            [call = std::move(call)](Seat& s, const auto& done) { done(s.hook(call)); },
            std::forward<Token>(token));
    }

    /// `hook_wait`: void(Result<HookOutcome>).
    template <class Token>
    auto async_hook_wait(std::string request_id, std::chrono::milliseconds wait, Token&& token) {
        return on_strand<Result<HookOutcome>>(
            [id = std::move(request_id), wait](Seat& s, const auto& done) {
                s.hook_wait(id, wait, done);
            },
            std::forward<Token>(token));
    }

    /// The window (the fan-out ring). On the strand.
    [[nodiscard]] const Window& window() const noexcept { return feed_.window(); }

    /// When the frame at `pos` was published, while recent (Feed::published_at). On the strand.
    [[nodiscard]] std::optional<std::chrono::steady_clock::time_point>
    published_at(std::uint64_t pos) const noexcept {
        return feed_.published_at(pos);
    }

    /// The seat's epoch. On the strand.
    [[nodiscard]] const std::string& epoch() const noexcept { return spec_.epoch; }

    /// Closes the seat: cancels its turn, syncs the transcript (on the writer), ends streams.
    /// @param then_remove also removes the seat's folder, on the writer, after its last write:
    ///   moved to `archive_to`, or deleted when that is empty.
    void close(bool then_remove = false, std::filesystem::path archive_to = {});

    /// Closes the seat as `close` does, telling the broker nothing more (scale-out with shared
    /// storage: this node lost the seat's lease; the node that holds it now publishes it).
    void release() {
        released_ = true;
        close();
    }

    // JournalEvents (called by its journal, on the strand).
    void on_durable(
        std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) override;

    void on_write_failed() override;

private:
    // SourceHost (what a source is given of its seat).
    Feed& feed() noexcept override { return feed_; }

    Journal& journal() noexcept override { return *journal_; }

    SeatSpec& spec() noexcept override { return spec_; }

    const SeatOptions& options() const noexcept override { return opt_; }

    std::shared_ptr<Seat> seat() override { return shared_from_this(); }

    void touched(std::chrono::system_clock::time_point at) noexcept override {
        last_activity_ = at;
    }

    void changed() override {
        hooks_seen();
        wake_all();
        update_summary();
    }

    class Sink;

    // Tells the notifier (if any) about `n`, naming this seat; a mirror never does (its owner
    // node sends).
    void tell(Notice n);
    // Tells of a turn that ended or failed after running at least `notify_long_turn`.
    void tell_long_turn(
        TurnDurations::Outcome outcome,
        std::chrono::steady_clock::duration took,
        const std::string& error);

    // Runs `op(seat, done)` on the strand, `done(R)` completing `token` (hub/async.hpp).
    template <class R, class Op, class Token>
    auto on_strand(Op op, Token&& token) {
        return detail::async_run<R>(
            strand_,
            [self = shared_from_this(), op = std::move(op)](std::function<void(R)> done) mutable {
                op(*self, std::move(done));
            },
            std::forward<Token>(token));
    }

    Seat(boost::asio::io_context& io, SeatSpec spec, SeatOptions opt);
    // A seat with its journal bound to it (every open starts here).
    static std::shared_ptr<Seat> make(boost::asio::io_context& io, SeatSpec spec, SeatOptions opt);

    // turns (seat.cpp)
    void start_next_turn();
    void on_row(std::uint64_t turn, boost::json::object row);
    void on_event(std::uint64_t turn, runtime::AgentEvent event);
    void on_preview(std::uint64_t turn, StreamEvent ev);
    void on_end(std::uint64_t turn, runtime::TurnEnd end);
    void finish_turn(runtime::TurnEnd end);
    void fail_turn(std::string reason);
    void note_permission(const runtime::AgentEvent& event);
    void resolve_permission(
        const std::string& id,
        runtime::PermissionResolved::Behavior behavior,
        std::string by,
        const std::string& reason = {});
    // HookHost: a hooked prompt's card shown and withdrawn (seat_serve.cpp)
    void show_hooked(runtime::PermissionRequest ask) override;
    void withdraw_hooked(const std::string& id, std::string by, const std::string& reason) override;
    void hooks_seen();
    void withdraw_permissions();
    // Why nothing can be written to this seat now (foreign, closed, mirror, unavailable,
    // read-only, degraded), if so: what refuses a prompt and a reset alike.
    [[nodiscard]] std::optional<Failure> not_writable() const;
    // settings and conversation reset (seat_serve.cpp)
    std::optional<Failure> reset_refused() const;
    void begin_reset(boost::json::object row, bool rebuild_agent, Done done);
    void run_reset();
    void reset_written(boost::system::error_code ec, const std::string& why);
    void settings_answered(
        const runtime::AgentSettings& settings,
        const runtime::Agent::SettingsAnswer& answer,
        const Done& done);
    void session_started(const runtime::SessionStarted& started); // a claude process's init row
    // publishing (seat.cpp): frames through the journal, then the feed
    void enqueue_frame(FramePtr frame);
    void publish_preview(const StreamEvent& ev);
    void flush_held_previews();
    void push_turn_state(const std::string& data);
    void save_meta();
    // budgets (seat_serve.cpp): a durable result row's cost counted, a notice at 80 %; the
    // agent made again (after a reset, or with what its budget leaves), `none` the seat's
    // reason when the factory makes none
    void count_spend(const Frame& f);
    void remake_agent(const char* none);

    void sync_transcript(bool clean = false) { journal_->sync(spec_, clean); }

    // viewers (seat_feed.cpp)
    [[nodiscard]] FeedHead head() const noexcept;

    void wake_all() const { feed_.wake_all(); }

    void update_summary();
    strand_type strand_;
    SeatSpec spec_;
    SeatOptions opt_;
    std::shared_ptr<Journal> journal_; // the folder on disk: transcript, meta.json (hub/journal)
    std::unique_ptr<Source> source_;   // a fed seat's source (null: hosted); fixed at creation
    Feed feed_;                        // the window, the viewers, the pages (hub/feed.hpp)
    std::unique_ptr<runtime::Agent> agent_;
    std::string unavailable_;        // why there is no agent (empty: available)
    bool rebuild_for_budget_{false}; // a claude seat's budget changed during a turn

    struct Turns {
        boost::container::deque<std::string> queue;      // prompts waiting, FIFO
        std::optional<CancellationToken> cancel;         // set while a turn runs
        std::uint64_t running{};                         // the running turn's number
        std::chrono::steady_clock::time_point started{}; // when the running turn began
        std::optional<runtime::TurnEnd> pending_end;     // ended, its frames still being appended
        std::string failure;                             // why the running turn failed (a write)
        bool closing{false};                             // its closing rows are being appended
    } turns_;

    TurnClose turn_close_; // what the running (or last) turn lacks to be whole

    // A conversation reset (seat_serve.cpp): asked for, waiting for the appends in flight to
    // finish (no batch is sent to the writer meanwhile); then the epoch changes at once and the
    // writer archives the transcript before any frame of the new epoch.
    struct Reset {
        bool wanted{false};        // begun, not yet run
        bool writing{false};       // its writer job is in flight
        bool rebuild_agent{false}; // the owner asked: the agent starts over (no session)
        boost::json::object row;   // its system/conversation_reset frame (new epoch's first)
        std::vector<Done> done;    // who waits for it to be on disk
    } reset_;

    // Previews that came while frames before them are still being appended (shown once those
    // are published, or superseded by a newer frame).
    RelayQueue held_previews_{SUBSCRIBER_PREVIEW_LIMITS};

    PermissionPrompts permissions_;     // the running turn's prompts, and the last ones answered
    std::shared_ptr<HookBridge> hooks_; // a foreign seat's hooked prompts (made at its first hook)
    // The agent said it waits on the person (`session_state_changed: requires_action`), until
    // it says otherwise or the turn ends.
    bool agent_requires_action_{false};

    bool closed_{false};
    bool released_{false};      // closed by `release`: nothing more goes to the broker
    bool told_degraded_{false}; // the notifier heard that a write failed (once per seat)

    std::optional<std::chrono::system_clock::time_point> last_activity_;
    mutable std::mutex summary_mu_;
    SeatSummary summary_;
};

} // namespace sluice::hub
