// The agents `serve` can run: the seats' agent factory and the agent kinds GET /v1/agents lists.
#include "serve_agents.hpp"

#include "runtime_flags.hpp"

#include <sluice/hub/spend_limits.hpp>
#include <sluice/hub/usage.hpp>
#include <sluice/runtime/agents/acp_agent.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace sluice::app {

namespace {

// Permission modes are Claude Code's words; a request may only name one of them.
bool valid_permission_mode(const std::string& m) {
    return m.empty() || runtime::stream_json::is_permission_mode(m);
}

// Whether `p` is `root` or lies under it (both canonical).
bool inside(const std::filesystem::path& p, const std::filesystem::path& root) {
    auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    return r == root.end();
}

// The newest session id a restored seat's rows name (a meta.json from before sessions were
// recorded): its system/init rows.
std::string session_in_rows(const std::vector<boost::json::object>& rows) {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        if (auto sid = runtime::stream_json::init_session_id(*it); !sid.empty()) {
            return std::string(sid);
        }
    }
    return {};
}

// A hosted CLI seat's working directory: the spec's cwd (relative to the workspace root), else
// a per-seat folder made under it; it must lie inside the root. Empty and `why` set otherwise.
std::filesystem::path
seat_cwd(const std::filesystem::path& root, const hub::SeatSpec& spec, std::string& why) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path cwd = spec.cwd.empty() ? root / spec.id : fs::path(spec.cwd);
    if (cwd.is_relative()) {
        cwd = root / cwd;
    }
    cwd = fs::weakly_canonical(cwd, ec);
    if (ec || !inside(cwd, root)) {
        if (!spec.session_id.empty() && !spec.cwd.empty()) {
            // A continued session: its cwd came from the session, not the client.
            why = "the session's cwd " + cwd.string() + " lies outside the workspace root "
                  + root.string()
                  + " (set workspace_root, or serve --workspace-root, to a folder holding it)";
            return {};
        }
        why =
            "field 'cwd': " + cwd.string() + " must lie inside the workspace root " + root.string();
        return {};
    }
    if (spec.cwd.empty()) {
        fs::create_directories(cwd, ec);
    }
    if (!fs::is_directory(cwd, ec)) {
        why = "field 'cwd': no such directory: " + cwd.string();
        return {};
    }
    return cwd;
}

// A claude seat's agent: its cwd checked to lie inside the workspace root (a reason, so the
// create is a 400, otherwise), a per-seat folder by default; it resumes its session.
hub::AgentOrReason claude_agent(
    const RuntimeFlags& flags,
    const std::filesystem::path& root,
    const hub::SeatSpec& spec,
    const std::vector<boost::json::object>& rows,
    const boost::asio::any_io_executor& ex) {
    if (auto why = claude_unrunnable(flags); !why.empty()) {
        return {nullptr, std::move(why)}; // refused at creation, not at the first prompt
    }
    if (!valid_permission_mode(spec.permission_mode)) {
        return {
            nullptr,
            "field 'permission_mode' must be one of "
                + std::string(runtime::stream_json::PERMISSION_MODES)};
    }
    std::string why;
    const auto cwd = seat_cwd(root, spec, why);
    if (!why.empty()) {
        return {nullptr, std::move(why)};
    }
    auto pc = claude_agent_config(
        flags,
        spec.model,
        spec.permission_mode,
        spec.session_id.empty() ? session_in_rows(rows) : spec.session_id);
    pc.working_dir = cwd.string();
    if (spec.budget_left) {
        // What its budgets leave it (the seat refuses a prompt once one is spent).
        pc.argv.emplace_back("--max-budget-usd");
        pc.argv.push_back(hub::max_budget_arg(*spec.budget_left));
    }
    return {runtime::make_process_agent(ex, std::move(pc)), {}};
}

// A codex seat's agent: `codex app-server` in the seat's cwd (as a claude seat's), resuming the
// seat's thread; `permission_mode` carries Codex's approval policy.
hub::AgentOrReason codex_agent(
    const RuntimeFlags& flags,
    const std::filesystem::path& root,
    const hub::SeatSpec& spec,
    const std::vector<boost::json::object>& rows,
    const boost::asio::any_io_executor& ex) {
    if (auto why = codex_unrunnable(flags); !why.empty()) {
        return {nullptr, std::move(why)};
    }
    if (!spec.permission_mode.empty()
        && !runtime::codex::is_approval_policy(spec.permission_mode)) {
        return {
            nullptr,
            "field 'permission_mode' of agent \"codex\" is its approval policy, one of "
                + std::string(runtime::codex::APPROVAL_POLICIES)};
    }
    std::string why;
    const auto cwd = seat_cwd(root, spec, why);
    if (!why.empty()) {
        return {nullptr, std::move(why)};
    }
    runtime::CodexAgentConfig cc;
    cc.bin = flags.codex_bin;
    cc.working_dir = cwd.string();
    cc.thread_id = spec.session_id.empty() ? session_in_rows(rows) : spec.session_id;
    cc.model = spec.model;
    cc.approval_policy = spec.permission_mode;
    return {runtime::make_codex_agent(ex, std::move(cc)), {}};
}

// An acp seat's agent: its command line (one the hub still allows: a restart with other
// --acp-agent lines leaves the seat unavailable, saying why) in the seat's cwd, loading the
// seat's session.
hub::AgentOrReason acp_agent(
    const std::vector<std::string>& allowed,
    const std::filesystem::path& root,
    const hub::SeatSpec& spec,
    const std::vector<boost::json::object>& rows,
    const boost::asio::any_io_executor& ex) {
    if (std::find(allowed.begin(), allowed.end(), spec.cmd) == allowed.end()) {
        return {
            nullptr,
            "this hub no longer allows the ACP agent '" + spec.cmd
                + "' (serve --acp-agent names the command lines a seat may run)"};
    }
    if (auto why = acp_unrunnable(spec.cmd); !why.empty()) {
        return {nullptr, std::move(why)};
    }
    std::string why;
    const auto cwd = seat_cwd(root, spec, why);
    if (!why.empty()) {
        return {nullptr, std::move(why)};
    }
    runtime::AcpAgentConfig ac;
    ac.argv = *runtime::acp::split_command(spec.cmd, why);
    // A program named by a relative path is where the hub was started (as acp_unrunnable found
    // it), not in the seat's folder, where it runs.
    if (auto& program = ac.argv.front();
        program.find('/') != std::string::npos && std::filesystem::path(program).is_relative()) {
        std::error_code ec;
        program = std::filesystem::absolute(program, ec).string();
    }
    ac.working_dir = cwd.string();
    ac.session_id = spec.session_id.empty() ? session_in_rows(rows) : spec.session_id;
    return {runtime::make_acp_agent(ex, std::move(ac)), {}};
}

} // namespace

std::filesystem::path workspace_root(const ServeOptions& o) {
    std::filesystem::path root = o.workspace_root.empty()
                                     ? std::filesystem::path(o.data) / "workspaces"
                                     : std::filesystem::path(o.workspace_root);
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    return std::filesystem::weakly_canonical(root, ec);
}

std::vector<server::AgentKind> agent_kinds(const ServeOptions& o) {
    const auto& f = o.runtime;
    std::string builtin = "provider " + f.provider;
    if (!f.model.empty()) {
        builtin += ", model " + f.model;
    }
    server::AgentKind claude{
        .kind = "claude", .available = true, .detail = f.claude_bin, .reason = {}};
    claude.reason = claude_unrunnable(f);
    claude.available = claude.reason.empty();
    server::AgentKind codex{
        .kind = "codex", .available = true, .detail = f.codex_bin, .reason = {}};
    codex.reason = codex_unrunnable(f);
    codex.available = codex.reason.empty();
    server::AgentKind acp{.kind = "acp", .available = true, .detail = {}, .reason = {}};
    for (const auto& cmd : o.acp_agents) {
        if (auto why = acp_unrunnable(cmd); why.empty()) {
            acp.commands.push_back(cmd);
        } else {
            acp.reason += (acp.reason.empty() ? "" : "; ") + why;
        }
    }
    acp.available = !acp.commands.empty();
    if (o.acp_agents.empty()) {
        acp.reason = "the hub runs with no --acp-agent";
    }
    server::AgentKind process{
        .kind = "process", .available = !f.agent_cmd.empty(), .detail = {}, .reason = {}};
    if (!process.available) {
        process.reason = "the hub runs with no --agent-cmd";
    }
    return {
        {.kind = "builtin", .available = true, .detail = builtin, .reason = {}},
        claude,
        codex,
        acp,
        process};
}

hub::AgentFactory agent_factory(
    const ServeOptions& o,
    std::shared_ptr<hub::SpendLimits> limits,
    std::shared_ptr<const hub::PriceTable> prices) {
    const runtime::RuntimeConfig rc = runtime_config(o.runtime);
    const bool has_agent_cmd = !o.runtime.agent_cmd.empty();
    const runtime::ProcessAgentConfig pc =
        has_agent_cmd ? process_agent_config(o.runtime) : runtime::ProcessAgentConfig{};
    // Each agent runs on its seat's strand (the hub passes it): its turns and sink calls run
    // there, one at a time. A missing flag or a bad setting is a reason (the seat is
    // unavailable), never an exception out of the factory.
    const std::filesystem::path root = workspace_root(o);

    // Every seat keeps a copy of the factory: what it needs is held once, shared (a copy of
    // the configurations in each of 10,000 listed session files' seats cost ~1 KiB apiece).
    struct AgentConfigs {
        runtime::RuntimeConfig rc;
        runtime::ProcessAgentConfig pc;
        bool has_agent_cmd{};
        RuntimeFlags flags;
        std::filesystem::path root;
        std::shared_ptr<hub::SpendLimits> limits;
        std::shared_ptr<const hub::PriceTable> prices;
        std::vector<std::string> acp_agents;
    };

    auto made = std::make_shared<const AgentConfigs>(AgentConfigs{
        rc,
        pc,
        has_agent_cmd,
        o.runtime,
        root,
        std::move(limits),
        std::move(prices),
        o.acp_agents});
    return [made](
               const hub::SeatSpec& spec,
               const std::vector<boost::json::object>& rows,
               const boost::asio::any_io_executor& ex) -> hub::AgentOrReason {
        if (spec.agent == "claude") {
            return claude_agent(made->flags, made->root, spec, rows, ex);
        }
        if (spec.agent == "codex") {
            return codex_agent(made->flags, made->root, spec, rows, ex);
        }
        if (spec.agent == "acp") {
            return acp_agent(made->acp_agents, made->root, spec, rows, ex);
        }
        if (spec.agent == "process") {
            if (!made->has_agent_cmd) {
                return {nullptr, "agent kind 'process' needs the hub to run with --agent-cmd"};
            }
            return {runtime::make_process_agent(ex, made->pc), {}};
        }
        auto cfg = made->rc;
        if (!spec.model.empty()) {
            cfg.model = spec.model;
        }
        if (!spec.system.empty()) {
            cfg.system_prompt = spec.system;
        }
        if (made->limits && made->prices) {
            cfg.budget_left = [limits = made->limits, id = spec.id] {
                return limits->left(id, hub::utc_day_now());
            };
            cfg.cost_of = [prices = made->prices](const session::Usage& u) {
                return prices->cost(
                    u.model,
                    hub::MessageTokens{
                        .tokens =
                            hub::UsageTokens{
                                .input = static_cast<std::int64_t>(u.input),
                                .output = static_cast<std::int64_t>(u.output),
                                .cache_read = static_cast<std::int64_t>(u.cache_read),
                                .cache_write = static_cast<std::int64_t>(u.cache_creation)},
                        .cache_write_1h = 0});
            };
        }
        try {
            return {runtime::make_builtin_agent(ex, cfg, rows), {}};
        } catch (const std::invalid_argument& e) {
            return {nullptr, e.what()};
        }
    };
}

} // namespace sluice::app
