// FrameBuilder: turns a turn's semantic StreamEvents into Claude Code stream-json rows.
#pragma once

#include <sluice/core/event.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::runtime {

/// A fresh random UUID (version 4) as text, for `uuid` and `session_id` fields.
[[nodiscard]] std::string make_uuid();

/// Builds the frames (rows) of one turn, in the shape of
/// `claude -p --output-format stream-json --verbose`:
/// - `assistant`: `{"type":"assistant","message":{"id","type":"message","role":"assistant",
///   "model","content":[thinking{thinking,signature} | redacted_thinking{data} | text |
///   tool_use{id,name,input}],"stop_reason","usage"},"parent_tool_use_id":null,"session_id",
///   "uuid"}`
///   — one row per assistant message, from `MessageHistory` (lossless; text previews are not used);
///   a message the runtime kept from a stopped answer carries `"interrupted": true` on its row;
/// - `user` tool_result: one row per result, from `ToolResult` (or from history if missed);
/// - `system` subtype `notice`: from `Notice`;
/// - `result` last, on `Done`: `subtype` success | error_during_execution, `is_error`,
///   `num_turns` (responses), `result` (final answer text, or the error), `usage`, `duration_ms`.
/// Previews are not frames; `preview_row` encodes one as a `stream_event` row for `sluice run`.
///
/// @par Thread safety
/// None: one instance per turn, fed from one thread.
class FrameBuilder {
public:
    /// @param session_id the seat's session id (written into every row)
    /// @param history_base messages that were in the history before this turn (the prompt
    ///   included): only messages after them become rows
    /// @param model the model name used when a message does not say
    FrameBuilder(std::string session_id, std::size_t history_base, std::string model = {});

    /// Feeds one event; returns the rows it completes, in order (often none). Previews give none.
    std::vector<boost::json::object> on_event(const StreamEvent& ev);

    /// Encodes a preview as a `stream_event` row (`content_block_delta` with `text_delta`,
    /// `thinking_delta` or `input_json_delta`; `tool_result_delta` extension for tool output);
    /// `ToolUseStart` gives a `content_block_start` row; nullopt for other events.
    std::optional<boost::json::object> preview_row(const StreamEvent& ev);

    /// Whether `Done` was seen (the `result` row was produced).
    [[nodiscard]] bool finished() const noexcept { return finished_; }

    /// The error of the turn, if it ended with `Error`.
    [[nodiscard]] const std::optional<session::Error>& error() const noexcept { return error_; }

private:
    static boost::json::object envelope(std::string_view type);
    void rows_from_history(const session::MessageHistory& h, std::vector<boost::json::object>& out);
    boost::json::object assistant_row(const boost::json::value& message);
    boost::json::object
    tool_result_row(std::string tool_use_id, boost::json::value content, bool is_error);
    boost::json::object result_row();
    std::size_t block_index_for(int kind, const std::string& tool_id);

    std::string session_id_;
    std::size_t seen_;
    std::string model_;
    std::chrono::steady_clock::time_point started_;
    std::vector<std::string> emitted_results_; // tool_use ids whose result row is out
    std::optional<session::Usage> usage_;
    std::optional<session::Error> error_;
    std::string last_text_;
    std::uint32_t responses_{};
    std::uint64_t message_seq_{};
    bool finished_{false};
    // stream_event block indexing: a change of preview kind or tool id opens a new block.
    int preview_kind_{-1};
    std::string preview_tool_;
    std::size_t preview_index_{};
    bool preview_any_{false};
};

/// Rebuilds provider history (Anthropic shape) from frames of a seat: user prompt rows,
/// assistant rows (consecutive rows of one message id merged), user tool_result rows; result,
/// system, stream_event and sub-agent rows (`parent_tool_use_id` set) are skipped.
[[nodiscard]] std::vector<boost::json::value>
messages_from_rows(const std::vector<boost::json::object>& rows);

} // namespace sluice::runtime
