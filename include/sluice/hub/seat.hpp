// Seat: one hosted conversation — its agent, transcript, window (the fan-out ring) and viewers.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/core/cancel.hpp>
#include <sluice/core/error.hpp>
#include <sluice/hub/subscriber.hpp>
#include <sluice/runtime/agent.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sluice {
class Transcript;
}

namespace sluice::hub {

using conversation_budget = Budget;

/// What a seat is: its identity and its agent's settings (persisted in `meta.json`).
struct SeatSpec {
    std::string id;                ///< stable id (generated when empty)
    std::string name;              ///< for people
    std::string agent{"builtin"};  ///< "builtin" | "process"
    std::string model;             ///< builtin: model override (empty: the server's)
    std::string system;            ///< builtin: system prompt override
    std::string epoch;             ///< changes when the conversation is replaced
    std::uint64_t turns{};         ///< prompts accepted so far
};

/// Builds a seat's agent from its spec and the rows it already holds (the window's frames).
using AgentFactory = std::function<std::unique_ptr<runtime::Agent>(
    const SeatSpec&, std::vector<boost::json::object> history_rows)>;

/// A seat's state as the API shows it.
enum class SeatState : std::uint8_t { idle, running, queued };

/// The name of a seat state ("idle", "running", "queued").
[[nodiscard]] const char* state_name(SeatState s) noexcept;

/// A snapshot of a seat, readable from any thread.
struct SeatSummary {
    std::string id, name, agent, epoch;
    SeatState state{SeatState::idle};
    std::uint64_t turns{}, frames{}, window_first{}, window_frames{}, window_bytes{};
    std::uint64_t preview_dropped_bytes{}, subscribers{}, resyncs{}, queued{};
    std::optional<std::chrono::system_clock::time_point> last_activity;
};

/// What `submit` did with a prompt.
struct Submitted {
    std::uint64_t turn{}; ///< the prompt's turn number (1-based)
    bool queued{};        ///< whether it waits behind a running turn
};

/// A page of history: whole turns, oldest first, with a cursor for older ones.
struct HistoryPage {
    std::string json; ///< `{"turns":[{"first","frames":[…]}],"cursor":…}`
};

/// Settings a seat takes from its hub.
struct SeatOptions {
    std::filesystem::path dir;                    ///< the seat's folder
    AgentFactory make_agent;                      ///< builds its agent
    std::size_t max_queued_prompts{16};           ///< more is refused
    std::chrono::milliseconds sync_interval{500}; ///< fsync timer while a turn runs
    Budget budget{};                              ///< window budget
};

/// One conversation. Semantic output becomes frames: appended to the transcript first, then
/// held in the window and published by position (`seq`) within the seat's `epoch`. Previews go
/// to live subscribers only, each through its own bounded lane. One turn at a time; later
/// prompts queue.
///
/// @par Thread safety
/// Every member but `summary`, `strand` and `id` is confined to `strand()`. The agent calls
/// back from its own thread; those calls are handed to the strand through a bounded intake.
class Seat : public std::enable_shared_from_this<Seat> {
public:
    using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;

    /// Opens (or creates) the seat in `opt.dir`, restoring its window from the transcript.
    static boost::system::result<std::shared_ptr<Seat>> open(
        boost::asio::io_context& io, SeatSpec spec, SeatOptions opt);

    ~Seat();
    Seat(const Seat&) = delete;
    Seat& operator=(const Seat&) = delete;

    /// The strand every confined member runs on.
    [[nodiscard]] strand_type& strand() noexcept { return strand_; }
    /// The seat's id.
    [[nodiscard]] const std::string& id() const noexcept { return spec_.id; }
    /// A snapshot. Safe from any thread.
    [[nodiscard]] SeatSummary summary() const;

    /// Accepts a prompt: starts a turn, or queues it. Errors: conflict (seat closed),
    /// overloaded (queue full), bad_request (empty).
    boost::system::result<Submitted> submit(std::string text);
    /// Cancels the running turn (queued prompts stay queued). Returns whether one was running.
    bool cancel();

    /// Adds a subscriber. `last` is a Last-Event-ID ("<epoch>:<seq>"): if it is still in the
    /// window the subscriber resumes after it, otherwise it starts with `connected`.
    void attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last);
    /// Removes a subscriber; one attached with `cancel_on_disconnect` cancels the running turn.
    void detach(const std::shared_ptr<Subscriber>& sub);
    /// Appends the subscriber's next events to `out` (nothing when it is up to date).
    void collect(Subscriber& sub, std::vector<OutEvent>& out);
    /// Whether the seat is closed (its subscribers' streams should end).
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    /// A page of whole turns before `before` (default: the newest), at most `turns` turns.
    boost::system::result<HistoryPage> history(std::optional<std::uint64_t> before, std::size_t turns);

    /// Closes the seat: cancels its turn, syncs the transcript, ends subscriber streams.
    void close();

private:
    struct Intake;
    class Sink;
    Seat(boost::asio::io_context& io, SeatSpec spec, SeatOptions opt);

    void start_next_turn();
    void drain_intake();
    void publish_row(boost::json::object row);
    void publish_preview(const StreamEvent& ev);
    void finish_turn(runtime::TurnEnd end);
    void push_control(std::string data);
    void wake_all();
    void update_summary();
    void save_meta();
    void schedule_sync();
    std::shared_ptr<const std::string> connected_data();

    strand_type strand_;
    SeatSpec spec_;
    SeatOptions opt_;
    std::unique_ptr<Transcript> transcript_;
    Window window_;
    std::unique_ptr<runtime::Agent> agent_;
    std::shared_ptr<Intake> intake_;
    std::deque<std::string> queue_;
    std::optional<CancellationToken> turn_cancel_;
    std::uint64_t running_turn_{};
    bool closed_{false};
    bool dirty_{false};
    std::vector<std::shared_ptr<Subscriber>> subscribers_;
    boost::asio::steady_timer sync_timer_;
    bool sync_armed_{false};
    std::uint64_t preview_dropped_{};
    std::uint64_t resyncs_{};
    std::optional<std::chrono::system_clock::time_point> last_activity_;
    std::shared_ptr<const std::string> connected_cache_;
    std::uint64_t connected_cache_end_{~std::uint64_t{0}};
    std::uint64_t connected_cache_first_{~std::uint64_t{0}};
    mutable std::mutex summary_mu_;
    SeatSummary summary_;
};

} // namespace sluice::hub
