// AgentEvent: an agent's control-protocol events (permission prompts, session state), typed.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace sluice::runtime {

/// The agent asks whether a tool may run, and waits for Agent::answer_permission (Claude Code's
/// `can_use_tool` control request).
struct PermissionRequest {
    std::string request_id;                 ///< what the answer names
    std::string tool_name;                  ///< e.g. "Bash"
    std::optional<std::string> tool_use_id; ///< the tool_use block asking, when given
    boost::json::value input{};             ///< the tool's input as asked (null when absent)
    std::string title;                      ///< for a person: "Create x", else "Allow <tool>?"
    boost::json::value decision_reason{};   ///< why the agent asks (null when absent)
    std::optional<std::string> cwd{};       ///< where the tool runs, when the asker says
    bool hooked{false}; ///< asked by a terminal's Claude Code through its hook (not a seat's agent)

    /// The frame recording it: `{"type":"system","subtype":"permission_request","request_id",
    /// "tool_name","tool_use_id","input","title","decision_reason"}` (absent fields null), plus
    /// `"cwd"` when known and `"hooked":true` for a hook's prompt.
    [[nodiscard]] boost::json::object row() const;
};

/// How a permission request ended.
struct PermissionResolved {
    /// allow / deny: answered; withdrawn: nobody answers any more (the agent took it back, or
    /// the turn ended).
    enum class Behavior { allow, deny, withdrawn };

    std::string request_id;
    Behavior behavior{Behavior::withdrawn};
    std::string by; ///< who: "agent" (it withdrew), "sluice" (turn over), or who answered

    /// "allow" | "deny" | "withdrawn".
    [[nodiscard]] static std::string_view behavior_name(Behavior b) noexcept;

    /// The frame recording it:
    /// `{"type":"system","subtype":"permission_resolved","request_id","behavior","by"}`.
    [[nodiscard]] boost::json::object row() const;
};

/// The agent's session state changed (Claude Code's `system/session_state_changed`: idle,
/// running, requires_action).
struct SessionStateChanged {
    std::string state;       ///< as the agent named it
    boost::json::object row; ///< the agent's row, a frame

    /// Whether the agent waits on the person (`requires_action`).
    [[nodiscard]] bool requires_action() const noexcept { return state == "requires_action"; }
};

/// The agent's session started under `session_id` (a `system/init` row with a session id).
struct SessionStarted {
    std::string session_id;  ///< never empty
    boost::json::object row; ///< the agent's row, a frame
};

/// The agent replaced its conversation itself (Claude Code's `/clear`: a `conversation_reset`
/// row); the rows after it belong to the new conversation.
struct ConversationReset {
    boost::json::object row; ///< the agent's row as it wrote it (type `conversation_reset`)
};

/// One event of an agent's control protocol, in order with its rows (TurnSink::on_event).
using AgentEvent = std::variant<
    PermissionRequest,
    PermissionResolved,
    SessionStateChanged,
    SessionStarted,
    ConversationReset>;

/// The row an event is recorded as: the agent's own row (session state, session start,
/// reset), or the frame sluice writes for it (permission request, resolved).
[[nodiscard]] boost::json::object event_row(AgentEvent event);

} // namespace sluice::runtime
