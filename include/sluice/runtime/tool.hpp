// Tool: something the model may call during a turn (bash, read_file, …), awaited by the turn.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/runtime/provider.hpp>

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
    CancellationToken cancel;                        ///< cancelled: stop at once (kill processes)
    std::chrono::milliseconds timeout{30'000};       ///< give up (and kill) after this long
    std::size_t max_output{64 * 1024};               ///< most output bytes kept and streamed
    std::function<void(std::string_view)> on_output; ///< raw output as it arrives (may be empty)
};

/// What a tool run amounted to.
struct ToolOutcome {
    std::string output; ///< what the model sees: at most `max_output` bytes plus a short note
    bool is_error{};    ///< the tool failed (non-zero exit, timeout, bad input, cancelled)
};

/// A tool the model may call.
///
/// @par Thread safety
/// `spec` from any thread; `run` is awaited by one turn at a time (the runtime runs tools one
/// after another) and must complete promptly once `ctx.cancel` is cancelled.
class Tool {
public:
    virtual ~Tool() = default;

    /// The name, description and input schema offered to the model.
    [[nodiscard]] virtual ToolSpec spec() const = 0;

    /// Runs on the awaiting coroutine's executor; never blocks an I/O thread; returns promptly
    /// once ctx.cancel is cancelled; timeout via a steady_timer; never throws for a tool
    /// failure (that is `is_error`). `ctx.on_output` is called on the coroutine's executor.
    /// @return the output (capped at `ctx.max_output`) and whether it is an error.
    virtual boost::asio::awaitable<ToolOutcome> run(boost::json::value input, ToolContext ctx) = 0;
};

} // namespace sluice::runtime
