// CodexAgent settings: OpenAI's Codex CLI hosted as `codex app-server` (JSON-RPC on stdio).
#pragma once

#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime {

/// How to host Codex. The executable comes from sluice's configuration (`--codex-bin`), never
/// from request data; the process gets sluice's environment (so `CODEX_HOME` and its
/// `config.toml`, model providers and approval policy, reach it) plus `env`.
///
/// Protocol (codex 0.169's app-server): the process starts with the first turn; `initialize`
/// then `initialized`; `thread/start` (or `thread/resume` of `thread_id`, or of the thread the
/// agent started before, when a process starts again after a crash); each prompt a
/// `turn/start`; cancel a `turn/interrupt` (the process is ended when no `turn/completed`
/// follows within `interrupt_grace`). Notifications become frames and previews
/// (codex_items.hpp); command and file change approvals become PermissionRequest events,
/// answered with Codex's `{"decision":"accept"|"decline"}`; every other request from the
/// process is refused (-32601). A line that is not JSON, a refused start or the process's exit
/// fails the turn with the reason, and the next turn starts a new process resuming the thread.
struct CodexAgentConfig {
    std::string bin{"codex"};     ///< the executable (looked up in PATH)
    std::string working_dir{"."}; ///< the process's and the thread's working directory
    std::string thread_id;        ///< a thread to resume from the first turn ("" : a new one)
    std::string model;            ///< "" : Codex's configured model
    std::string
        approval_policy; ///< "" : Codex's configured policy (else codex::is_approval_policy)
    std::vector<std::string> env; ///< "NAME=value" entries on top of sluice's environment
    std::size_t max_line_bytes{32 * 1024 * 1024};     ///< a longer line fails the turn
    std::chrono::milliseconds start_timeout{30'000};  ///< initialize and thread start, answered
    std::chrono::milliseconds interrupt_grace{5'000}; ///< wait this long for the interrupted end
    std::chrono::milliseconds terminate_grace{2'000}; ///< SIGTERM → SIGKILL
};

/// OpenAI's Codex CLI hosted as `codex app-server` (see CodexAgentConfig): kind "codex". Takes
/// settings: a model and an approval policy (AgentSettings::permission_mode carries Codex's
/// approval policy), checked at once and carried by the next turn.
/// @param ex as for make_builtin_agent (agent.hpp).
[[nodiscard]] std::unique_ptr<Agent>
make_codex_agent(const boost::asio::any_io_executor& ex, CodexAgentConfig config);

namespace codex {

/// Codex's approval policies a seat may name (0.169's AskForApproval strings).
[[nodiscard]] bool is_approval_policy(std::string_view policy) noexcept;

/// The approval policies, for error text.
inline constexpr std::string_view APPROVAL_POLICIES = "untrusted, on-request, never";

} // namespace codex

} // namespace sluice::runtime
