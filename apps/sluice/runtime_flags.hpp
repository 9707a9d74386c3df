// The runtime flags of `sluice run` and `sluice serve`, declared once, and the configs built from
// them.
#pragma once

#include <sluice/runtime/agents/process_agent.hpp>
#include <sluice/runtime/runtime.hpp>

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::app {

/// The values of the runtime flags (defaults as documented by `--help`).
struct RuntimeFlags {
    std::string provider{"scripted"};
    std::string base_url;
    std::string model;
    std::string tools;
    std::string agent_cmd;
    std::string script;
    double pace{1.0};
    std::string system;
    std::string workdir{"."};
    std::uint32_t max_rounds{16};
    std::size_t max_tool_output{64 * 1024};
    std::int64_t tool_timeout_ms{120'000};
    std::uint32_t thinking_budget{0};
    std::string agent;                    ///< run: "claude" / "codex" hosts that agent itself
    std::string claude_bin{"claude"};     ///< the claude agent kind's executable
    std::string codex_bin{"codex"};       ///< the codex agent kind's executable
    std::vector<std::string> claude_args; ///< extra flags for every claude (configuration only)
};

/// Declares the runtime flags on `app` (--provider, --base-url, --model, --tools, --agent-cmd,
/// --script, --pace, --system, --workdir/--cwd, --max-rounds, --max-tool-output,
/// --tool-timeout-ms, --thinking-budget), writing into `flags`.
/// @param flags must outlive the parse.
void add_runtime_flags(CLI::App& app, RuntimeFlags& flags);

/// The builtin runtime's configuration from the flags.
[[nodiscard]] runtime::RuntimeConfig runtime_config(const RuntimeFlags& flags);

/// The hosted agent's configuration from the flags (`--agent-cmd` run through /bin/sh).
/// @pre `!flags.agent_cmd.empty()`
[[nodiscard]] runtime::ProcessAgentConfig process_agent_config(const RuntimeFlags& flags);

/// The claude agent kind's configuration: `--claude-bin` with Claude Code's stream-json flags
/// and `--permission-prompt-tool stdio`, then `--claude-arg`s, then `--model`/`--permission-mode`
/// when given; permission prompts hosted, sessions resumed (`session_id` to start from).
[[nodiscard]] runtime::ProcessAgentConfig claude_agent_config(
    const RuntimeFlags& flags,
    const std::string& model,
    const std::string& permission_mode,
    const std::string& session_id);

/// Why the claude agent kind cannot run here: `flags.claude_bin` names no executable file (a path
/// with a `/`), or none is on `PATH`. Empty when it can run.
[[nodiscard]] std::string claude_unrunnable(const RuntimeFlags& flags);

/// Why the codex agent kind cannot run here (`flags.codex_bin`, as claude_unrunnable).
[[nodiscard]] std::string codex_unrunnable(const RuntimeFlags& flags);

/// Why ACP agent command line `cmd` (serve --acp-agent) cannot run here: it does not split
/// (acp::split_command), or its executable is found nowhere (as claude_unrunnable). Empty when
/// it can run.
[[nodiscard]] std::string acp_unrunnable(const std::string& cmd);

} // namespace sluice::app
