// Codex's app-server messages as sluice's frames: pure translation, no I/O.
#pragma once

#include <sluice/core/event.hpp>
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime::codex {

/// What one notification of a running turn means to its sink: frames (in order) and at most one
/// preview.
struct TurnOutput {
    std::vector<boost::json::object> rows;
    std::optional<StreamEvent> preview;
};

/// Codex's token usage of one turn, summed over its model requests.
struct TurnUsage {
    std::int64_t input{};     ///< input tokens not read from the cache
    std::int64_t cached{};    ///< input tokens read from the cache
    std::int64_t output{};    ///< output tokens (reasoning included)
    std::int64_t reasoning{}; ///< of them, reasoning
    std::int64_t context_window{};
};

/// One Codex turn's notifications (`item/*`, `turn/*`, `thread/tokenUsage/updated`, `error`)
/// turned into frames in the shapes the page and the CLI render for Claude Code:
/// - an agent message: an `assistant` row with a text block; its deltas: Text previews;
/// - reasoning: an `assistant` row with a thinking block (summary, else raw text); its deltas:
///   Thinking previews;
/// - a command: an `assistant` `tool_use` "Bash" `{command, cwd}` when it starts, a `user`
///   `tool_result` with its output and exit code when it ends (an error when it failed or was
///   declined); its output deltas: ToolResultDelta previews;
/// - a file change: a `tool_use` "apply_patch" `{changes:[{path, kind, diff}]}` and its result;
/// - a plan update: a `tool_use` "TodoWrite" `{todos:[{content, status}]}` (statuses as Claude
///   Code's: pending, in_progress, completed), with no result;
/// - the turn's end: a `result` row (`subtype` success / error_during_execution / interrupted,
///   `is_error`, `result` = the last agent message or the error, `usage` in Anthropic's fields,
///   `model`, `duration_ms`).
/// Everything else (status changes, rate limits, warnings) is no frame.
///
/// @par Thread safety
/// None: one per turn, on its agent's executor.
class TurnTranslator {
public:
    /// `model`: the model the thread runs (for the rows' `message.model`), may be empty.
    TurnTranslator(std::string thread_id, std::string model);

    /// A notification of this turn; `turn_id` is the running turn's (notifications of other
    /// turns are no frames).
    TurnOutput on_notification(std::string_view method, const boost::json::object& params);

    /// The turn is over (`turn/completed`'s `turn`): its result row.
    [[nodiscard]] boost::json::object result_row(const boost::json::object& turn) const;

    /// The input a file change asked to apply (its `changes`), when its item started.
    [[nodiscard]] const boost::json::value* changes_of(const std::string& item_id) const;

    [[nodiscard]] const TurnUsage& usage() const noexcept { return usage_; }

    /// The last `error` notification's message ("" when none came).
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
    boost::json::object assistant(std::string id, boost::json::object block) const;
    void item_started(const boost::json::object& item, TurnOutput& out);
    void item_completed(const boost::json::object& item, TurnOutput& out);

    std::string thread_id_;
    std::string model_;
    std::string last_text_;
    std::string error_;
    TurnUsage usage_;
    std::map<std::string, boost::json::value> changes_; // file change items' changes, by id
};

/// A server request asking for an approval (`item/commandExecution/requestApproval`,
/// `item/fileChange/requestApproval`) as a permission prompt; none for another method.
/// `request_id` is what the answer names (the JSON-RPC id as text); `changes`: the file
/// change's changes when known.
[[nodiscard]] std::optional<PermissionRequest> permission_of(
    std::string_view method,
    const boost::json::object& params,
    std::string request_id,
    const boost::json::value* changes);

/// The reply line (with '\n') to an approval request `id`: `{"decision":"accept"}` or
/// `"decline"`.
[[nodiscard]] std::string approval_reply(const boost::json::value& id, bool allow);

/// A JSON-RPC request line (with '\n').
[[nodiscard]] std::string
request_line(std::int64_t id, std::string_view method, boost::json::object params);

/// A JSON-RPC notification line (with '\n').
[[nodiscard]] std::string notification_line(std::string_view method);

/// The error reply line (with '\n') to a server request sluice does not serve.
[[nodiscard]] std::string refusal_line(const boost::json::value& id, std::string_view method);

} // namespace sluice::runtime::codex
