// ProcessAgent settings: an agent CLI speaking stream-json on stdio (e.g. Claude Code), hosted by
// sluice.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace sluice::runtime {

/// How to run a hosted agent process. The command comes from sluice's configuration (flags,
/// config file), never from request data.
///
/// Protocol: each prompt is written to the process's stdin as one stream-json user row
/// (`{"type":"user","message":{"role":"user","content":"…"}}`); each stdout line is a JSON
/// row: `stream_event` rows become previews (content_block_delta text_delta → Text,
/// thinking_delta → Thinking, input_json_delta → ToolUseDelta), `control_*` and `keep_alive`
/// rows are handled or ignored, an echo of the prompt is dropped, session state, session start
/// and conversation reset rows become events (stream_json::frame_event), every other row is a
/// frame; a `result` row ends the turn. Cancel sends a `control_request` interrupt (when
/// `control_interrupt`) and waits `interrupt_grace` for the `result`, else terminates the
/// process (SIGTERM to its process group, SIGKILL after `terminate_grace`); the next turn
/// starts a new process.
struct ProcessAgentConfig {
    /// argv of the agent (argv[0] is looked up in PATH), e.g. {"claude", "-p",
    /// "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
    /// "--include-partial-messages"}.
    std::vector<std::string> argv;
    std::string working_dir{"."};                 ///< the process's working directory
    std::size_t max_line_bytes{32 * 1024 * 1024}; ///< a longer stdout line fails the turn
    bool control_interrupt{true};                 ///< cancel by a control_request interrupt first
    std::chrono::milliseconds interrupt_grace{3'000}; ///< wait this long for the interrupted result
    std::chrono::milliseconds terminate_grace{2'000}; ///< SIGTERM → SIGKILL
    /// Claude Code's permission prompts (`--permission-prompt-tool stdio`): a can_use_tool
    /// control request becomes a PermissionRequest event (TurnSink::on_event) and waits for
    /// Agent::answer_permission; a `control_cancel_request` becomes PermissionResolved
    /// "withdrawn". Off: every control request is refused at once (the agent goes on).
    bool host_permissions{false};
    /// Remember the `system/init` session id and start every later process with
    /// `--resume <id>` (Claude Code's own conversation memory).
    bool resume_sessions{false};
    std::string session_id;        ///< resume_sessions: the session to resume from the start
    bool relay_stream_rows{false}; ///< also hand every stream_event row to on_stream_row
    /// Claude Code's `set_permission_mode`/`set_model` (Agent::apply_settings): sent to the
    /// running process as control requests, and kept in the command line (`--permission-mode`,
    /// `--model`) of every later process. Off: apply_settings does nothing.
    bool live_settings{false};
    /// "NAME=value" entries set in the process's environment on top of sluice's own.
    std::vector<std::string> env;

    /// argv running `command` through `/bin/sh -c "exec <command>"` (a configured command line).
    [[nodiscard]] static std::vector<std::string> shell_argv(const std::string& command);

    /// The Claude Code command line for hosting `claude` (the protocol above).
    [[nodiscard]] static std::vector<std::string> claude_argv();

    /// The `claude` agent kind's command line: `bin -p --input-format stream-json
    /// --output-format stream-json --verbose --include-partial-messages
    /// --permission-prompt-tool stdio`.
    [[nodiscard]] static std::vector<std::string> claude_seat_argv(const std::string& bin);
};

} // namespace sluice::runtime
