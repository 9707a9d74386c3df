// Runtime: the turn loop — provider rounds, tool runs and history — streamed into a relay.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/core/relay.hpp>
#include <sluice/runtime/providers/provider.hpp>
#include <sluice/runtime/tools/tool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::runtime {

/// How a runtime (and the builtin agent) is configured.
struct RuntimeConfig {
    ProviderConfig provider;        ///< which provider to build
    std::string model;              ///< empty: provider.model, then the provider's default
    std::string system_prompt;      ///< the system prompt (may be empty)
    std::vector<std::string> tools; ///< enabled built-in tools ("bash", "read_file", "echo")
    std::string working_dir{"."};   ///< where tools run
    std::uint32_t max_rounds{16};   ///< provider responses per turn at most
    std::size_t max_tool_output{64 * 1024}; ///< bytes of one tool's output kept and streamed
    std::chrono::milliseconds tool_timeout{120'000}; ///< one tool run at most
    std::uint32_t max_tokens{8192};                  ///< output cap per response
    std::optional<std::uint32_t> thinking_budget;    ///< extended thinking budget, if enabled
    /// What a turn may still spend in USD, asked as each turn starts (none: no limit), and what
    /// a usage costs (none: no known price). With both, a turn whose responses cost that much
    /// ends after the response that did, before the next (Error with Outcome::over_budget), as
    /// Claude Code's `--max-budget-usd` ends one.
    std::function<std::optional<double>()> budget_left;
    std::function<std::optional<double>(const session::Usage&)> cost_of; ///< see budget_left
};

/// Runs turns: each turn streams provider responses, runs the tools they ask for, and repeats
/// until the model ends the turn or `max_rounds` responses were made.
///
/// Events of a turn, in order: per round the provider's events (Text, Thinking, ToolUseStart,
/// ToolUseDelta, ToolUse, Notice), then `MessageHistory` (the assistant message appended), then
/// per requested tool `ToolResultDelta`s and a `ToolResult`, then `MessageHistory` (the
/// tool_result user message appended); after the last round `Usage` (summed over rounds) and
/// `Done`. Any failure (provider error, round limit, cancel, exception) sends `Usage`,
/// `Error{message, outcome}` and `Done`: a turn always ends, never hangs.
///
/// Memory: previews go through the relay (bounded, lossy); the runtime itself never holds more
/// than one response's assembled message plus `max_tool_output` per tool.
///
/// A turn is a coroutine co_spawned on the runtime's executor: it costs no thread, and its
/// provider requests, timers and tool runs use that executor. The coroutine owns what it uses
/// (the shared state and a copy of the configuration), so it may finish after the Runtime is
/// gone; an exception escaping it is logged by its completion handler.
///
/// @par Thread safety
/// Safe from any thread. One turn runs at a time (the provider allows one stream); a turn
/// started while another runs gets `Error` (errc::conflict) and `Done` at once. The destructor
/// cancels a running turn and returns without waiting for it.
class Runtime {
public:
    /// Builds the provider (`make_provider(config.provider)`) and the enabled tools; with the
    /// scripted provider and no tools enabled, its harmless `echo` tool is enabled.
    /// @param ex where turns run (a strand, or an io_context's executor).
    /// @throws std::invalid_argument on a bad provider or tool setting.
    Runtime(boost::asio::any_io_executor ex, const RuntimeConfig& config);

    /// Uses `provider` and `tools` as given (tests, benchmarks, embedding).
    Runtime(
        boost::asio::any_io_executor ex,
        RuntimeConfig config,
        std::shared_ptr<Provider> provider,
        std::vector<std::shared_ptr<Tool>> tools);

    /// Cancels a running turn (without waiting for it to end).
    ~Runtime();

    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    Runtime(Runtime&&) = delete;
    Runtime& operator=(Runtime&&) = delete;

    /// Starts a turn on the runtime's executor and returns at once.
    /// @param messages the conversation so far in the Anthropic Messages shape, ending with the
    ///   user's prompt; dangling tool_use blocks (a turn cut short) are answered with error
    ///   tool_results and adjacent same-role messages are merged before the first request.
    /// @param cancel cancelling it (or destroying the returned receiver) closes the provider
    ///   connection, kills tool processes and ends the turn with Error{cancelled} and Done.
    /// @return the caller's end of the turn's relay (read it with `async_next`, or with the
    ///   blocking `next` from a thread that is not the executor's).
    [[nodiscard]] RelayReceiver run_stream_with_messages(
        std::vector<boost::json::value> messages, const CancellationToken& cancel);

    /// Waits until no turn runs; false if one still runs after `timeout`. For callers on plain
    /// threads: called on the executor's only thread it would wait for itself.
    bool wait_idle(std::chrono::milliseconds timeout);

    /// The configuration in force.
    [[nodiscard]] const RuntimeConfig& config() const noexcept { return config_; }

private:
    struct State;
    RuntimeConfig config_;
    std::shared_ptr<State> state_;
};

/// Normalizes provider history: merges adjacent messages of the same role and answers every
/// tool_use that has no tool_result with an error tool_result, so a cut turn can continue.
[[nodiscard]] std::vector<boost::json::value>
repair_history(std::vector<boost::json::value> messages);

} // namespace sluice::runtime
