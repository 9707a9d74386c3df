// The agent kinds a seat may name, and what each kind allows.
#pragma once

#include <string_view>

namespace sluice::hub {

/// Whether agent kind `agent` is an agent CLI the hub hosts in a working directory, with a
/// session it resumes (SeatSpec::session_id: Claude Code's session, Codex's thread, an ACP
/// agent's session): "claude", "codex" and "acp".
[[nodiscard]] inline bool hosts_cli(std::string_view agent) noexcept {
    return agent == "claude" || agent == "codex" || agent == "acp";
}

/// Whether a person may set and change the model and permission setting of agent kind `agent`
/// (SeatSpec::permission_mode: Claude Code's permission mode, Codex's approval policy): "claude"
/// and "codex". An ACP agent's model and modes are its own configuration's.
[[nodiscard]] inline bool takes_agent_settings(std::string_view agent) noexcept {
    return agent == "claude" || agent == "codex";
}

/// The agent kinds, for error text.
inline constexpr std::string_view AGENT_KINDS_TEXT =
    R"("builtin", "process", "claude", "codex" or "acp")";

} // namespace sluice::hub
