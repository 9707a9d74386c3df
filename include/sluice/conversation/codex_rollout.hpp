// Codex CLI rollout files read as frames: each rollout line becomes at most one frame row in the
// stream-json shape sluice's own and Claude Code's rows have, judged from that line alone.
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace sluice {

/// The frame row a Codex rollout line (codex-cli 0.169.0: `{"timestamp","ordinal","type",
/// "payload"}`) reads as, or nullopt when the line is no frame (or not JSON).
///
/// The mapping is one line to at most one frame, decided by that line alone, so a rollout can be
/// numbered, cut and paged by byte offset from its end exactly as a transcript of frame rows is
/// (`TranscriptOptions::format`):
/// - `event_msg` `item_completed` `UserMessage` → a user row with the prompt's text blocks (opens
///   a turn); the environment context is a `response_item`, never a UserMessage, so it is no frame;
/// - `item_completed` `AgentMessage` → an assistant row of text blocks;
/// - `item_completed` `Reasoning` → an assistant row with one thinking block (none when codex kept
///   no summary or raw text);
/// - `response_item` `function_call` / `custom_tool_call` → an assistant row with one tool_use
///   block (`exec_command` and `shell` as `Bash` {command, description}, `update_plan` as
///   `TodoWrite` {todos}); its `*_output` → a user row with the tool_result (exec's
///   "Chunk ID … Output:" header dropped, a non-zero exit an error). These rows, not the
///   `CommandExecution` item, carry commands: codex writes no item for a command that was
///   declined, and every other tool has only them;
/// - `task_complete` → a result row (success, or the error codex recorded); `turn_aborted` → a
///   result row `outcome: "cancelled"` (a person's interrupt) or `"failed"`.
/// Everything else (`session_meta`, `turn_context`, `world_state`, `token_count`,
/// `token_usage_record`, the `response_item` messages and reasoning that duplicate the items, …)
/// is no frame. A frame row carries the rollout row's `timestamp`.
[[nodiscard]] std::optional<boost::json::object> codex_frame_row(std::string_view line);

/// The frame row of a rollout row already parsed; see the line overload.
[[nodiscard]] std::optional<boost::json::object> codex_frame_row(const boost::json::object& row);

/// Whether `line` may be a frame row of a rollout: false only for lines `codex_frame_row` surely
/// maps to nothing (it holds none of the row kinds that are frames), found without parsing it.
[[nodiscard]] bool codex_may_be_frame(std::string_view line) noexcept;

/// What a rollout's `session_meta` row says of its session.
struct CodexSessionMeta {
    std::string id;  ///< the thread (session) id
    std::string cwd; ///< the folder codex ran in
};

/// The session meta of `line`, when it is a `session_meta` row.
[[nodiscard]] std::optional<CodexSessionMeta> codex_session_meta(std::string_view line);

/// The text a person typed, when `line` is a rollout's `item_completed` `UserMessage` row (its
/// text blocks joined by newlines); nullopt for any other line.
[[nodiscard]] std::optional<std::string> codex_prompt_text(std::string_view line);

} // namespace sluice
