// Agent: the one interface the hub drives every kind of agent through (builtin runtime or process).
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/core/event.hpp>
#include <sluice/runtime/agents/agent_events.hpp>
#include <sluice/runtime/agents/process_agent.hpp>
#include <sluice/runtime/runtime.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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
/// Every call runs on the agent's executor (`ex` of make_*_agent), one at a time, in order:
/// rows and previews as they come, then `on_end` exactly once, last; never inline inside
/// `start_turn`. A sink call must not block (it runs on an I/O thread); it may destroy the
/// agent or start another turn.
class TurnSink {
public:
    virtual ~TurnSink() = default;
    /// A frame row (stream-json shape: assistant, user tool_result, system, result, …); never
    /// the user's prompt row (the caller records that itself).
    virtual void on_row(boost::json::object row) = 0;
    /// A preview: Text / Thinking / ToolUseDelta / ToolResultDelta (lossy, not a frame).
    virtual void on_preview(StreamEvent preview) = 0;

    /// An event of the agent's control protocol (a permission prompt and how it ended, a
    /// session state or start, a conversation reset), in order with the rows. Each is also a
    /// frame (`event_row`): the default hands that to `on_row`, so a sink that only records rows
    /// sees the rows it always did.
    virtual void on_event(AgentEvent event) { on_row(event_row(std::move(event))); }

    /// The turn is over; nothing follows.
    virtual void on_end(TurnEnd end) = 0;

    /// Every `stream_event` row of the agent as it wrote it, in order with the rows (only from
    /// a process agent configured with `relay_stream_rows`); a host relaying rows verbatim
    /// (`sluice run --agent claude`) prints these instead of previews. Default: ignored.
    // By value: an override takes the row (a sink).
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    virtual void on_stream_row(boost::json::object /*row*/) {}
};

/// An answer to a permission prompt (a PermissionRequest event) the agent raised.
struct PermissionAnswer {
    std::string request_id;                          ///< the request answered
    bool allow{false};                               ///< allow, else deny
    std::string message;                             ///< deny: what the agent is told
    std::optional<boost::json::value> updated_input; ///< allow: the tool's input, changed
};

/// What an owner may change on a running agent: Claude Code's `set_permission_mode` and
/// `set_model` control requests. An unset field stays as it is.
struct AgentSettings {
    std::optional<std::string> permission_mode; ///< e.g. "acceptEdits", "plan", "default"
    std::optional<std::string> model; ///< a model name; "default": the session's default model

    /// What a field's `value` is kept as once taken: "" for "default" (the agent's own default,
    /// no flag), else `value`.
    [[nodiscard]] static std::string kept(const std::string& value) {
        return value == "default" ? std::string() : value;
    }
};

/// An agent: a conversation's worker. Turns run one at a time, in the order started.
///
/// No thread per agent or per turn: a turn is a coroutine on the agent's executor.
///
/// @par Thread safety
/// `start_turn` and `kind` are safe from any thread (`start_turn` posts to the executor). The
/// destructor may run on any thread, the executor's included (inside a sink call): it never
/// blocks or joins; it cancels the running turn, ends queued turns with `cancelled` (posted to
/// the executor) and terminates a process asynchronously (SIGTERM, SIGKILL after a grace).
class Agent {
public:
    /// Cancels the running turn, ends queued ones, ends any process; never blocks.
    virtual ~Agent() = default;

    /// Starts a turn with `prompt` and returns at once. If a turn is running, this one waits
    /// for it (FIFO). Cancelling `cancel` ends the turn with State::cancelled (a running
    /// provider connection is closed, tool processes killed, an agent process interrupted).
    virtual void
    start_turn(std::string prompt, CancellationToken cancel, std::shared_ptr<TurnSink> sink) = 0;

    /// "builtin" | "process".
    [[nodiscard]] virtual std::string kind() const = 0;

    /// Forwards an answer to a pending permission prompt (PermissionRequest event) to the
    /// agent; returns at once. An answer to a request the agent no longer waits on is dropped.
    /// The caller decides which answer wins (the first); default: no prompts, dropped.
    // By value: an override takes the answer.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    virtual void answer_permission(PermissionAnswer /*answer*/) {}

    /// Whether this agent takes AgentSettings (apply_settings does something).
    [[nodiscard]] virtual bool takes_settings() const { return false; }

    /// How `apply_settings` ended.
    struct SettingsAnswer {
        std::string error; ///< "" when the agent took every field asked, else its first refusal
        /// The model the agent says it now uses, when it said (Claude Code answers `set_model`
        /// with the model it resolved the name to, e.g. a retired one remapped); "" otherwise.
        std::string model;
    };

    /// How `apply_settings` ends (see SettingsAnswer).
    using SettingsDone = std::function<void(SettingsAnswer answer)>;

    /// Applies `settings`: to the running process (control requests; `done` gets the process's
    /// answer: no error or its error, also when the process ends before answering, and the
    /// model it reports) and to every process started later (its command line; with no process
    /// running, `done({})`). Returns at once; `done` runs once, on the agent's executor. A field
    /// the process refused is not kept for later processes; a model it reports using is what
    /// later processes are given. Default: `done({})` (nothing to apply).
    // By value: an override takes the callback.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    virtual void apply_settings(const AgentSettings& /*settings*/, SettingsDone done) { done({}); }
};

/// An agent run by sluice's own Runtime (`config` as for `Runtime`); rows come from a
/// FrameBuilder. Each turn is a coroutine on `ex` reading the runtime's relay with
/// `async_next`.
/// @param ex where turns run and every sink call is made; @pre a strand or a single-threaded
///   io_context's executor (the agent's state is confined to it).
/// @param history_rows earlier frames of the seat (stream-json shape), from which the provider
///   history is rebuilt (`messages_from_rows`).
/// @throws std::invalid_argument on a bad provider or tool setting.
[[nodiscard]] std::unique_ptr<Agent> make_builtin_agent(
    const boost::asio::any_io_executor& ex,
    const RuntimeConfig& config,
    const std::vector<boost::json::object>& history_rows);

/// An agent CLI hosted as a child process speaking stream-json (see ProcessAgentConfig). The
/// process starts with the first turn and ends with the agent; its pipes are stream
/// descriptors on `ex` and its exit is observed there (pidfd).
/// @param ex as for make_builtin_agent.
[[nodiscard]] std::unique_ptr<Agent>
make_process_agent(const boost::asio::any_io_executor& ex, ProcessAgentConfig config);

} // namespace sluice::runtime
