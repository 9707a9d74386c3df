// Tool: something the model may call during a turn (bash, read_file, …), run as a coroutine.
#pragma once
// Header-only by design: an interface; the built-in tools are in tools.hpp (src/runtime/tools/).

#include <sluice/core/cancel.hpp>
#include <sluice/runtime/providers/provider.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sluice::runtime {

/// What a tool run may use, and where its output goes while it runs.
struct ToolContext {
    CancellationToken cancel;                  ///< cancelled: stop at once (kill processes)
    std::chrono::milliseconds timeout{30'000}; ///< give up (and kill) after this long
    std::size_t max_output{64 * 1024};         ///< most output bytes kept and streamed
    /// Raw output as it arrives (may be empty); called on the running coroutine's executor.
    std::function<void(std::string_view)> on_output;
};

/// What a tool run amounted to.
struct ToolOutcome {
    std::string output; ///< what the model sees: at most `max_output` bytes plus a short note
    bool is_error{};    ///< the tool failed (non-zero exit, timeout, bad input, cancelled)
};

/// A tool the model may call.
///
/// @par Thread safety
/// `spec` from any thread. `run` is a coroutine on the awaiting coroutine's executor; runs of
/// one tool object may overlap (a tool keeps no per-run state in itself).
class Tool {
public:
    virtual ~Tool() = default;

    /// The name, description and input schema offered to the model.
    [[nodiscard]] virtual ToolSpec spec() const = 0;

    /// Runs the tool on `input` (the model's input object) on the awaiting coroutine's
    /// executor. Never blocks an I/O thread; returns promptly once `ctx.cancel` is cancelled
    /// (from any thread: the cancellation is posted to the executor); `ctx.timeout` is a
    /// steady_timer.
    /// @return the output (capped at `ctx.max_output`) and whether it is an error; never throws
    ///   for a failure of the tool itself (that is `is_error`).
    virtual boost::asio::awaitable<ToolOutcome> run(boost::json::value input, ToolContext ctx) = 0;
};

} // namespace sluice::runtime
