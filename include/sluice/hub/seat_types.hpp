// The types a seat is made with and shown by: its agent factory, its options from the hub, its
// state and summary, what a submitted prompt became (hub/seat.hpp is the seat itself).
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/hub/broker.hpp>
#include <sluice/hub/notify.hpp>
#include <sluice/hub/seat_meta.hpp>
#include <sluice/hub/spend_limits.hpp>
#include <sluice/hub/turn_durations.hpp>
#include <sluice/hub/usage_ledger.hpp>
#include <sluice/hub/writer.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::hub {

class SearchIndexer;

using conversation_budget = Budget;

class HookBridge; // a hooked seat's prompts and their waiting hooks (hook_bridge.hpp)

/// What an agent factory gives: an agent, or the reason there is none (the seat is then
/// `unavailable` with that reason: e.g. "agent kind 'process' needs --agent-cmd").
struct AgentOrReason {
    std::unique_ptr<runtime::Agent> agent; ///< the agent, or null
    std::string reason;                    ///< why there is no agent (when `agent` is null)
};

/// Builds a seat's agent from its spec and the rows it already holds (the window's frames).
/// `ex` is the seat's strand: every TurnSink call of the agent must arrive there (PLAN.md).
/// It must not throw; a factory that throws anyway is caught and its what() is the reason.
using AgentFactory = std::function<AgentOrReason(
    const SeatSpec&,
    std::vector<boost::json::object> history_rows,
    boost::asio::any_io_executor ex)>;

/// A seat's state as the API shows it. `degraded`: a write failed (or the data directory is
/// read-only): history and streams work, prompts are refused with the reason. `waiting`: a turn
/// runs and waits on a permission prompt.
enum class SeatState : std::uint8_t { idle, running, queued, unavailable, degraded, waiting };

/// The name of a seat state ("idle", "running", "queued", "unavailable", "degraded",
/// "waiting").
[[nodiscard]] const char* state_name(SeatState s) noexcept;

/// A snapshot of a seat, readable from any thread.
struct SeatSummary {
    std::string id, name, agent, epoch;
    SeatState state{SeatState::idle};
    bool degraded{false}; ///< a write failed (see `reason`)
    std::string reason;   ///< why it is unavailable or degraded (empty otherwise)
    std::uint64_t turns{}, frames{}, window_first{}, window_frames{}, window_bytes{};
    std::uint64_t preview_dropped_bytes{}, subscribers{}, resyncs{}, queued{};
    std::uint64_t write_errors{};        ///< failed transcript or metadata writes (appends, syncs)
    std::uint64_t pending_permissions{}; ///< permission prompts waiting for an answer
    std::optional<std::chrono::system_clock::time_point> last_activity;
    std::vector<BadLine> warnings; ///< damaged transcript lines skipped (never served)
    std::string source;            ///< "claude" for a foreign session file (empty: sluice's own)
    std::string project;           ///< foreign: the session's cwd
    std::string title;             ///< foreign: its title
    bool turns_known{true};        ///< foreign: whether `turns` is known yet
    std::string session_id;        ///< Claude Code's session id (a foreign or a claude seat's)
    /// The seq of the conversation's first frame: 0 for a hosted seat; for a session file, 0
    /// unless it was opened numbered from its end (longer than a window), then known once it is
    /// counted. None: not known yet (the file not opened, or still being counted).
    std::optional<std::uint64_t> origin;
    std::string model;           ///< the model asked for (empty: the agent's default)
    std::string permission_mode; ///< claude: the permission mode (empty: Claude Code's default)
    std::string cmd;             ///< acp: the agent's command line
    bool hooked{
        false}; ///< foreign: its terminal session's hooks reach this hub (prompts answerable)
    std::optional<double> budget_usd; ///< hosted: what it may spend in all (none: no limit)
    double spent_usd{};               ///< hosted: what its counted turns cost
};

/// What `submit` did with a prompt.
struct Submitted {
    std::uint64_t turn{}; ///< the prompt's turn number (1-based)
    bool queued{};        ///< whether it waits behind a running turn
};

/// Settings a seat takes from its hub.
struct SeatOptions {
    std::filesystem::path dir;                       ///< the seat's folder
    AgentFactory make_agent;                         ///< builds its agent
    std::shared_ptr<Writer> writer;                  ///< the hub's disk worker (never null)
    std::size_t max_queued_prompts{16};              ///< more is refused
    std::chrono::milliseconds sync_interval{500};    ///< fsync timer while a turn runs
    Budget budget{};                                 ///< window budget
    std::shared_ptr<Broker> broker{};                ///< the cluster engine (`--redis`), or null
    std::shared_ptr<TurnDurations> turn_durations{}; ///< where ended turns are counted, or null
    std::shared_ptr<UsageLedger> usage{};    ///< where a hosted seat's result rows are counted
    std::shared_ptr<SearchIndexer> search{}; ///< told when a hosted seat's frames are durable
    std::shared_ptr<Notifier> notifier{};    ///< told of events that need a person, or null
    /// A turn that ran at least this long tells the notifier when it ends or fails.
    std::chrono::milliseconds notify_long_turn{NOTIFY_LONG_TURN_DEFAULT};
    std::shared_ptr<SpendLimits> limits{}; ///< budgets a hosted seat's turns keep to, or null
};

} // namespace sluice::hub
