// stream-json (Claude Code's NDJSON on stdio) as pure functions: decode a stdout line, encode
// input.
#pragma once

#include <sluice/core/event.hpp>
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace sluice::runtime {

/// The string at `key` of `o`, or nullptr when absent or not a string. The one JSON field
/// reader of the runtime (frames, agents, tools).
[[nodiscard]] const boost::json::string*
find_str(const boost::json::object& o, std::string_view key) noexcept;

/// The string at `key` of `o`, or "" when absent or not a string.
[[nodiscard]] std::string_view
str_field(const boost::json::object& o, std::string_view key) noexcept;

namespace stream_json {

/// Whether `mode` is one of Claude Code's permission modes (default, acceptEdits, plan,
/// bypassPermissions, dontAsk, auto).
[[nodiscard]] bool is_permission_mode(std::string_view mode) noexcept;

/// The permission modes, for error text: "default, acceptEdits, plan, …".
inline constexpr std::string_view PERMISSION_MODES =
    "default, acceptEdits, plan, bypassPermissions, dontAsk, auto";

/// A line that is no row of the turn: blank, not JSON, not an object, `keep_alive`, or the
/// echo of a prompt (a `user`
/// row without tool results: the caller records prompts itself).
struct Ignored {};

/// A frame of the turn (assistant, user tool_result, system, …).
struct Frame {
    boost::json::object row{};
};

/// The agent withdrew a control request it made (`control_cancel_request`).
struct ControlCancel {
    std::string request_id;
};

/// A preview: `stream_event` content_block_delta text_delta → Text, thinking_delta → Thinking,
/// input_json_delta → ToolUseDelta (carrying the tool id of its content_block_start). `row` is
/// the whole `stream_event` row, for a host that relays rows as they are (`sluice run`).
struct Preview {
    StreamEvent event;
    boost::json::object row{};
};

/// A `stream_event` row that carries no preview (message_start, content_block_start/stop,
/// message_delta, message_stop, signature deltas, a sub-agent's partials): kept for a host that
/// relays rows as they are.
struct StreamRow {
    boost::json::object row{};
};

/// The agent asks the host something (`control_request`: permission prompt, hook, …).
struct ControlRequest {
    std::string request_id;
    boost::json::object row{};
};

/// The agent's answer to a control request sluice made (`control_response`): `error` is
/// empty for success, else the agent's message (with its `error_code` in brackets when given).
struct ControlResponse {
    std::string request_id;
    std::string error;
    boost::json::object response{}; ///< success: the response's `response` object
};

/// The `result` row: a frame, and the end of the turn.
struct TurnResult {
    boost::json::object row{};
};

/// What one stdout line is.
using Decoded = std::variant<
    Ignored,
    Frame,
    Preview,
    StreamRow,
    ControlRequest,
    ControlCancel,
    ControlResponse,
    TurnResult>;

/// Decodes an agent's stdout lines, one at a time. Sans-I/O: no Asio, no process.
///
/// State kept between lines: the tool ids of the current message's tool_use blocks (by content
/// block index), so input_json_delta previews name their tool; reset by `message_start`.
///
/// @par Thread safety
/// None: one decoder per agent process, fed in line order.
class Decoder {
public:
    /// Decodes one line (without its '\n'; a trailing '\r' or spaces are ignored).
    [[nodiscard]] Decoded decode(std::string_view line);

    /// Decodes one line already parsed (null: empty or not JSON), as `decode` does.
    [[nodiscard]] Decoded decode_value(boost::json::value v);

    /// Forgets per-message state (a new process).
    void reset() { tool_ids_.clear(); }

private:
    Decoded preview(const boost::json::object& row);
    std::map<std::int64_t, std::string> tool_ids_;
};

/// The stdin row carrying a prompt:
/// `{"type":"user","message":{"role":"user","content":prompt},"parent_tool_use_id":null}`.
[[nodiscard]] std::string encode_prompt(std::string_view prompt);

/// The stdin row asking the agent to stop its turn: a `control_request` with subtype
/// `interrupt` and `request_id`.
[[nodiscard]] std::string encode_interrupt(std::string_view request_id);

/// The stdin row asking the agent something: a `control_request` with `request_id` and
/// `request` (e.g. `{"subtype":"set_permission_mode","mode":"plan"}`).
[[nodiscard]] std::string
encode_control_request(std::string_view request_id, boost::json::object request);

/// The stdin row answering control request `request_id` with success and `response`.
[[nodiscard]] std::string
encode_control_success(std::string_view request_id, boost::json::object response);

/// The `response` of a can_use_tool answer, as Claude Code reads it: allow →
/// `{"behavior":"allow","updatedInput":updated_input or the request's input}`, deny →
/// `{"behavior":"deny","message":message or "denied"}`.
[[nodiscard]] boost::json::object permission_response(
    bool allow,
    std::string_view message,
    const boost::json::value* updated_input,
    const boost::json::value* original_input);

/// The subtype of the agent's control request (`can_use_tool`, `hook_callback`,
/// `mcp_message`, `elicitation`, …), or "" when it has none.
[[nodiscard]] std::string_view control_subtype(const ControlRequest& req) noexcept;

/// The permission prompt a can_use_tool request (`control_request` row `req`) asks, from the
/// fields of its `request` (title: its `title`, else its `description`, else "Allow <tool>?").
[[nodiscard]] PermissionRequest permission_request(const boost::json::object& req);

/// The stdin row answering at once a control request the host does not hold open, so that no
/// dialog is left pending and the agent goes on: can_use_tool is denied ("no one can answer
/// permission prompts here"), a hook continues, an MCP message gets a JSON-RPC error (no SDK
/// servers here), an elicitation is declined, anything else is refused (`encode_refusal`).
[[nodiscard]] std::string encode_default_answer(const ControlRequest& req);

/// The protocol event a frame row is, if any: `system/session_state_changed` →
/// SessionStateChanged, `system/init` with a session id → SessionStarted,
/// `conversation_reset` → ConversationReset. On an event `row` is moved into it; otherwise it
/// is left as it was (a plain frame).
[[nodiscard]] std::optional<AgentEvent> frame_event(boost::json::object& row);

/// The semantic row sluice records for a can_use_tool request (`control_request` row `req`):
/// `{"type":"system","subtype":"permission_request","request_id","tool_name","tool_use_id",
/// "input","title","decision_reason"}` (a system row: a frame that opens no turn) (title: the
/// request's `title`, else its `description`, else "Allow <tool>?"; absent fields null).
[[nodiscard]] boost::json::object permission_request_row(const boost::json::object& req);

/// The row recording how a permission request ended:
/// `{"type":"system","subtype":"permission_resolved","request_id","behavior","by"}` (behavior:
/// allow | deny | withdrawn).
[[nodiscard]] boost::json::object permission_resolved_row(
    std::string_view request_id, std::string_view behavior, std::string_view by);

/// One line for a person about a `system/api_retry` row ("retrying: 401 authentication_failed,
/// attempt 8 of 10 in 90 s"), or "" when `row` is no such row.
[[nodiscard]] std::string notice_text(const boost::json::object& row);

/// The session id of a `system/init` row, or "" when `row` is none.
[[nodiscard]] std::string_view init_session_id(const boost::json::object& row) noexcept;

/// The stdin row refusing a control request (sluice answers no permission prompt or hook), so
/// the agent goes on: a `control_response` with subtype `error`.
[[nodiscard]] std::string encode_refusal(std::string_view request_id);

} // namespace stream_json

} // namespace sluice::runtime
