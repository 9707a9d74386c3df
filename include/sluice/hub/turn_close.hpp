// TurnClose: what a turn still lacks to be whole (tool_results, a result row), and the rows that
// close it — in Claude Code's stream-json shapes.
#pragma once

#include <sluice/conversation/frame.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::hub {

/// The tool_result text of a tool a crash cut (the hub was gone before the tool finished).
inline constexpr std::string_view INTERRUPTED_TOOL_TEXT =
    "interrupted: the hub stopped before the tool finished";
/// The closing `result` of a turn a crash cut.
inline constexpr std::string_view INTERRUPTED_TEXT = "interrupted";
/// The closing `result` (and tool_result text) of a turn a graceful hub restart cut.
inline constexpr std::string_view RESTART_TEXT = "interrupted by a hub restart";
/// The closing `result` (and tool_result text) of a turn a person cancelled.
inline constexpr std::string_view CANCELLED_TEXT = "cancelled";

/// Follows one turn's frames (main thread only: a sub-agent's rows are its own business) and
/// says whether it is closed: every `tool_use` answered by a `tool_result`, and a `result` row.
///
/// @par Thread safety
/// None: a value owned by one seat.
class TurnClose {
public:
    /// Starts a new turn (its prompt is the next frame), run here: a turn closed later ended
    /// when it is closed.
    void start() noexcept;

    /// Notes one frame of the turn. Without `start` (a turn read back from a transcript), the
    /// first frame's `timestamp` is when the turn opened and the newest one's when it ended.
    void observe(const Frame& f);

    /// Whether a turn was started (or a frame observed) and still lacks its `result` row.
    [[nodiscard]] bool open() const noexcept { return seen_ && !result_; }

    /// The `tool_use` ids still waiting for their `tool_result`, oldest first.
    [[nodiscard]] const std::vector<std::string>& unanswered() const noexcept {
        return unanswered_;
    }

    /// The rows that close the turn: one `user` row with an `is_error` tool_result per
    /// unanswered tool_use (text `tool_text`), then a `result` row, subtype
    /// `error_during_execution`, `"result": result_text`, its `duration_ms` how long the turn
    /// ran (omitted when no frame said when it opened). Empty when the turn is closed.
    [[nodiscard]] std::vector<boost::json::object> closing_rows(
        std::string_view tool_text,
        std::string_view result_text,
        std::string_view session_id) const;

private:
    std::vector<std::string> unanswered_;
    std::optional<std::chrono::system_clock::time_point> opened_; ///< when the turn opened
    std::optional<std::chrono::system_clock::time_point> newest_; ///< its newest frame's time
    bool live_{false};                                            ///< started here: ends now
    bool seen_{false};
    bool result_{false};
};

} // namespace sluice::hub
