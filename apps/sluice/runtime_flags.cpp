// The runtime flags declared once for `run` and `serve`, and the runtime configs built from them.
#include "runtime_flags.hpp"

#include <sluice/runtime/agents/acp_agent.hpp>
#include <sluice/runtime/tools/tools.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace sluice::app {

void add_runtime_flags(CLI::App& app, RuntimeFlags& f) {
    app.add_option(
           "--provider", f.provider, "builtin agent's provider: anthropic | openai | scripted")
        ->check(CLI::IsMember({"anthropic", "openai", "scripted"}))
        ->capture_default_str();
    app.add_option("--base-url", f.base_url, "provider base URL (default: the provider's)");
    app.add_option("--model", f.model, "model id (default: the provider's)");
    app.add_option("--tools", f.tools, "enabled tools, comma-separated: bash,read_file,echo");
    app.add_option(
        "--agent-cmd", f.agent_cmd, "command of a stream-json agent (e.g. claude) on stdio");
    app.add_option("--script", f.script, "scripted provider: a JSON script (default: built-in)");
    app.add_option("--pace", f.pace, "scripted provider: delay factor, 0 = no delay")
        ->capture_default_str();
    app.add_option("--system", f.system, "system prompt");
    app.add_option("--workdir,--cwd", f.workdir, "working directory of tools and agent processes")
        ->capture_default_str();
    app.add_option("--max-rounds", f.max_rounds, "model responses per turn at most")
        ->capture_default_str();
    app.add_option("--max-tool-output", f.max_tool_output, "bytes of tool output kept")
        ->capture_default_str();
    app.add_option("--tool-timeout-ms", f.tool_timeout_ms, "one tool run at most")
        ->capture_default_str();
    app.add_option("--thinking-budget", f.thinking_budget, "extended thinking budget (0 = off)");
    app.add_option("--claude-bin", f.claude_bin, "Claude Code's executable (agent kind claude)")
        ->capture_default_str();
    app.add_option("--codex-bin", f.codex_bin, "Codex's executable (agent kind codex)")
        ->capture_default_str();
    app.add_option(
        "--claude-arg",
        f.claude_args,
        "an extra flag for every claude the hub starts (repeat for more)");
}

runtime::RuntimeConfig runtime_config(const RuntimeFlags& f) {
    runtime::RuntimeConfig c;
    c.provider.kind = f.provider;
    c.provider.base_url = f.base_url;
    c.provider.model = f.model;
    c.provider.script_path = f.script;
    c.provider.script_pace = f.pace;
    c.model = f.model;
    c.system_prompt = f.system;
    c.tools = runtime::split_tool_list(f.tools);
    c.working_dir = f.workdir;
    c.max_rounds = f.max_rounds;
    c.max_tool_output = f.max_tool_output;
    c.tool_timeout = std::chrono::milliseconds(f.tool_timeout_ms);
    if (f.thinking_budget > 0) {
        c.thinking_budget = f.thinking_budget;
    }
    return c;
}

runtime::ProcessAgentConfig process_agent_config(const RuntimeFlags& f) {
    runtime::ProcessAgentConfig pc;
    pc.argv = runtime::ProcessAgentConfig::shell_argv(f.agent_cmd);
    pc.working_dir = f.workdir;
    return pc;
}

runtime::ProcessAgentConfig claude_agent_config(
    const RuntimeFlags& f,
    const std::string& model,
    const std::string& permission_mode,
    const std::string& session_id) {
    runtime::ProcessAgentConfig pc;
    pc.argv = runtime::ProcessAgentConfig::claude_seat_argv(f.claude_bin);
    pc.argv.insert(pc.argv.end(), f.claude_args.begin(), f.claude_args.end());
    if (!model.empty()) {
        pc.argv.emplace_back("--model");
        pc.argv.push_back(model);
    }
    if (!permission_mode.empty()) {
        pc.argv.emplace_back("--permission-mode");
        pc.argv.push_back(permission_mode);
    }
    pc.working_dir = f.workdir;
    pc.host_permissions = true;
    pc.resume_sessions = true;
    pc.live_settings = true;
    // `system/session_state_changed` rows (idle, running, requires_action): a seat waiting on
    // the person says so even when the wait is not a permission prompt of ours.
    pc.env.emplace_back("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1");
    pc.session_id = session_id;
    return pc;
}

namespace {

// Why agent kind `kind` cannot run: `bin` names no executable file (a path with a `/`), or none
// is on PATH; `flag` names it, `what` is what to install.
std::string unrunnable(
    std::string_view kind, const std::string& bin, std::string_view flag, std::string_view what) {
    namespace fs = std::filesystem;
    const auto runnable = [](const fs::path& p) {
        std::error_code ec;
        return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
    };
    const std::string head = "agent kind '" + std::string(kind) + "' cannot run on this hub: ";
    if (bin.empty()) {
        return head + std::string(flag) + " is empty";
    }
    if (bin.find('/') != std::string::npos) {
        return runnable(bin)
                   ? std::string()
                   : head + bin + " is not an executable file (" + std::string(flag) + ")";
    }
    const char* path = std::getenv("PATH");
    std::string_view dirs = path != nullptr ? path : "";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const auto dir = dirs.substr(0, colon);
        if (runnable(fs::path(dir.empty() ? "." : dir) / bin)) {
            return {};
        }
        dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    }
    return head + "no executable '" + bin + "' on PATH (install " + std::string(what)
           + ", or name it with " + std::string(flag) + ")";
}

} // namespace

std::string claude_unrunnable(const RuntimeFlags& f) {
    return unrunnable("claude", f.claude_bin, "--claude-bin", "Claude Code");
}

std::string codex_unrunnable(const RuntimeFlags& f) {
    return unrunnable("codex", f.codex_bin, "--codex-bin", "Codex (npm @openai/codex)");
}

std::string acp_unrunnable(const std::string& cmd) {
    std::string why;
    const auto argv = runtime::acp::split_command(cmd, why);
    if (!argv) {
        return "agent kind 'acp' cannot run '" + cmd + "': " + why;
    }
    return unrunnable("acp", argv->front(), "--acp-agent", "the agent");
}

} // namespace sluice::app
