// The Agent Client Protocol's messages as sluice's frames, and its client methods: no process.
#pragma once

#include <sluice/core/event.hpp>
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime::acp {

/// What one update of a running prompt means to its sink: frames (in order) and at most one
/// preview.
struct TurnOutput {
    std::vector<boost::json::object> rows;
    std::optional<StreamEvent> preview;
};

/// A tool call as the frames name it: Claude Code's tool names and inputs where the ACP tool
/// kind has one (so the page and the CLI draw it the same way), else the agent's own.
/// - kind `execute`: "Bash" `{command, description}` (the command from the raw input, else
///   the title);
/// - a call whose content holds one diff: "Edit" `{file_path, old_string, new_string}`; more
///   than one: "apply_patch" `{changes:[{path, kind, diff}]}` with each diff's new text;
/// - kind `read` with a location: "Read" `{file_path}`;
/// - anything else: the agent's tool name (`_meta.toolName`), else its kind, with its raw input
///   (else `{title}`).
struct ToolShape {
    std::string name;
    boost::json::value input;
};

/// The shape of ACP tool call `call` (a `tool_call` update or a permission request's
/// `toolCall`).
[[nodiscard]] ToolShape tool_shape(const boost::json::object& call);

/// One prompt's `session/update` notifications turned into frames in the shapes the page and
/// the CLI render for Claude Code:
/// - `agent_message_chunk` text: Text previews, gathered into one `assistant` text row, written
///   when something else comes (or the prompt ends);
/// - `agent_thought_chunk`: the same as Thinking previews and a thinking row;
/// - `tool_call`: an `assistant` `tool_use` (tool_shape) the first time a call is seen;
///   `tool_call_update` to `completed` or `failed`: a `user` `tool_result` with the call's text
///   content (an error when failed);
/// - `plan`: a `tool_use` "TodoWrite" `{todos:[{content, status}]}`;
/// - usage in an update's `_meta.usage` (Qwen Code's) is summed for the result row.
/// Everything else (the user's own chunks, commands, modes) is no frame.
///
/// @par Thread safety
/// None: one per prompt, on its agent's executor.
class TurnTranslator {
public:
    /// `turn_tag` makes the rows' message ids unique to this prompt (ACP updates carry none
    /// for messages): "acp-<turn_tag>-<n>".
    TurnTranslator(std::string session_id, std::string turn_tag);

    /// One update (`params.update` of a `session/update`).
    TurnOutput on_update(const boost::json::object& update);

    /// A permission request's tool call: its tool_use row when the call was not seen yet.
    TurnOutput on_requested_call(const boost::json::object& call);

    /// The prompt is over: the text or thinking still gathered, then its result row.
    /// `stop_reason` as the agent answered ("" when it failed: then `error` says why);
    /// `usage` the answer's own usage object when it has one (it wins over the summed one).
    TurnOutput
    finish(std::string_view stop_reason, std::string_view error, const boost::json::object* usage);

private:
    boost::json::object assistant(boost::json::object block);
    void flush_text(TurnOutput& out);
    void flush_thinking(TurnOutput& out);
    void show_call(const boost::json::object& call, TurnOutput& out);
    void add_usage(const boost::json::object& usage);

    std::string session_id_;
    std::string turn_tag_;
    std::uint64_t next_row_{};
    std::string text_;
    std::string thinking_;
    std::string last_text_;
    std::set<std::string> shown_; // tool calls with a tool_use row
    std::set<std::string> ended_; // tool calls with a tool_result row
    std::int64_t input_{};
    std::int64_t cached_{};
    std::int64_t output_{};
};

/// A `session/request_permission` as a permission prompt. `request_id` is what the answer
/// names (the JSON-RPC id as text).
[[nodiscard]] PermissionRequest
permission_of(const boost::json::object& params, std::string request_id);

/// The answer (`result`) to a permission request offering `options`: the first option of kind
/// allow_once (else allow_always) when `allow`, reject_once (else reject_always) when not, as
/// `{"outcome":{"outcome":"selected","optionId"}}`; `{"outcome":{"outcome":"cancelled"}}` when
/// no option fits or `cancelled`.
[[nodiscard]] boost::json::object
permission_result(const boost::json::value& options, bool allow, bool cancelled = false);

/// A JSON-RPC 2.0 request line (with '\n').
[[nodiscard]] std::string
request_line(std::int64_t id, std::string_view method, boost::json::object params);

/// A JSON-RPC 2.0 notification line (with '\n').
[[nodiscard]] std::string notification_line(std::string_view method, boost::json::object params);

/// A JSON-RPC 2.0 answer line (with '\n') to request `id`.
[[nodiscard]] std::string result_line(const boost::json::value& id, boost::json::value result);

/// A JSON-RPC 2.0 error answer line (with '\n') to request `id`.
[[nodiscard]] std::string
error_line(const boost::json::value& id, std::int64_t code, std::string_view message);

/// How a client method ended: its result, or an error code and message for a person.
struct ClientAnswer {
    boost::json::value result;
    std::int64_t code{0}; ///< non-zero: failed (-32602 bad params, -32603 I/O, -32601 unknown)
    std::string message;
};

/// Serves client method `method` of an agent working in `root` (absolute, canonical):
/// `fs/read_text_file {path, line?, limit?}` → `{content}` (at most `max_file_bytes`);
/// `fs/write_text_file {path, content}` → null (parent folders made, the file replaced whole).
/// A path must be absolute and, symbolic links resolved, inside `root`. Every other method:
/// -32601 (terminals: sluice offers none). Blocking (file I/O).
[[nodiscard]] ClientAnswer serve_client(
    std::string_view method,
    const boost::json::object& params,
    const std::filesystem::path& root,
    std::size_t max_file_bytes);

} // namespace sluice::runtime::acp
