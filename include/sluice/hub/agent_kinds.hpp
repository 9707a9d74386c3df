// The agent kinds a seat may name, and what each kind allows.
#pragma once

#include <string_view>

namespace sluice::hub {

/// Whether agent kind `agent` is an agent CLI the hub hosts in a working directory, with a
/// session it resumes (SeatSpec::session_id: Claude Code's session, Codex's thread), a model and
/// a permission setting a person may change (SeatSpec::permission_mode: Claude Code's permission
/// mode, Codex's approval policy): "claude" and "codex".
[[nodiscard]] inline bool hosts_cli(std::string_view agent) noexcept {
    return agent == "claude" || agent == "codex";
}

} // namespace sluice::hub
