// Agent: the one interface the hub drives every kind of agent through (builtin runtime or process).
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/core/event.hpp>
#include <sluice/runtime/process_agent.hpp>
#include <sluice/runtime/runtime.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sluice::runtime {

/// How a turn ended.
struct TurnEnd {
    /// ended: the agent finished the turn (its `result` row may still say is_error);
    /// cancelled: the turn's token was cancelled (or the agent destroyed);
    /// failed: the provider, the process or the runtime failed (`error` says how).
    enum class State { ended, cancelled, failed } state{State::ended};
    std::string error; ///< one line for a person when not `ended`
};

/// Receives one turn's output.
///
/// Calls come from the agent's own thread, one at a time, in order: rows and previews as they
/// come, then `on_end` exactly once, last. A sink may block (that is backpressure: a builtin
/// agent's relay then bounds preview memory, a process agent stops reading the process's
/// stdout); it must not call back into the agent's destructor.
class TurnSink {
public:
    virtual ~TurnSink() = default;
    /// A frame row (stream-json shape: assistant, user tool_result, system, result, …); never
    /// the user's prompt row (the caller records that itself).
    virtual void on_row(boost::json::object row) = 0;
    /// A preview: Text / Thinking / ToolUseDelta / ToolResultDelta (lossy, not a frame).
    virtual void on_preview(StreamEvent preview) = 0;
    /// The turn is over; nothing follows.
    virtual void on_end(TurnEnd end) = 0;
};

/// An agent: a conversation's worker. Turns run one at a time, in the order started.
///
/// @par Thread safety
/// `start_turn` and `kind` are safe from any thread. The destructor cancels and joins any
/// running turn, ends any queued turn with `cancelled`, and ends any process; it must not run
/// on the agent's own thread (inside a sink call).
class Agent {
public:
    /// Cancels and joins any running turn, ends any process.
    virtual ~Agent() = default;

    /// Starts a turn with `prompt` and returns at once. If a turn is running, this one waits
    /// for it (FIFO). Cancelling `cancel` ends the turn with State::cancelled (a running
    /// provider connection is closed, tool processes killed, an agent process interrupted).
    virtual void start_turn(std::string prompt, CancellationToken cancel, std::shared_ptr<TurnSink> sink) = 0;

    /// "builtin" | "process".
    [[nodiscard]] virtual std::string kind() const = 0;
};

/// An agent run by sluice's own Runtime (`config` as for `Runtime`); rows come from a
/// FrameBuilder. @param history_rows earlier frames of the seat (stream-json shape), from
/// which the provider history is rebuilt (`messages_from_rows`).
/// @throws std::invalid_argument on a bad provider or tool setting.
[[nodiscard]] std::unique_ptr<Agent> make_builtin_agent(
    RuntimeConfig config, std::vector<boost::json::object> history_rows);

/// An agent CLI hosted as a child process speaking stream-json (see ProcessAgentConfig). The
/// process starts with the first turn and ends with the agent.
[[nodiscard]] std::unique_ptr<Agent> make_process_agent(ProcessAgentConfig config);

} // namespace sluice::runtime
