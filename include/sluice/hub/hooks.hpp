// Claude Code's hooks of a terminal session: what a hook reported (parsed from its JSON, no I/O)
// and what the hook waiting on a hooked permission prompt is told.
#pragma once

#include <sluice/hub/failure.hpp>
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::hub {

/// Longest a hooked prompt may wait in all: a hook's own timeout is capped here.
inline constexpr std::chrono::hours HOOK_TIMEOUT_MAX{24};
/// A hooked prompt whose hook has not asked for its answer for this long after its last wait
/// ended is taken as gone (Claude Code ended it) and closed. Basis: the hook asks again at
/// once after every wait; 15 s covers a loaded machine's scheduling.
inline constexpr std::chrono::seconds HOOK_GONE_AFTER{15};
/// Answered prompts whose hook has not fetched the answer yet, kept per seat (older: forgotten).
inline constexpr std::size_t HOOK_OUTCOMES_KEPT = 64;

/// The hook events sluice takes (`sluice hook claude EVENT`).
enum class HookEvent : std::uint8_t {
    permission_request, ///< a tool waits for permission: a card on the seat, the answer back
    notification,       ///< Claude Code waits on the person: the seat is `waiting`
    stop,               ///< the turn ended: the seat is idle, a prompt still open was answered
    session_start,      ///< a session began: its seat is listed before its first row
    session_end,        ///< the session ended: its prompts close, it is no longer hooked
    post_tool_use,      ///< a tool ran: its prompt, if still open, was answered in the terminal
};

/// The event named as Claude Code names it ("PermissionRequest", …), or nothing.
[[nodiscard]] std::optional<HookEvent> hook_event(std::string_view name) noexcept;

/// Claude Code's name of an event ("PermissionRequest", …).
[[nodiscard]] std::string_view hook_event_name(HookEvent e) noexcept;

/// What one hook reported: its event and the fields of its input sluice uses.
struct HookCall {
    HookEvent event{HookEvent::notification};
    std::string session_id;          ///< Claude Code's session id (a seat id's tail: `c-<id>`)
    std::string transcript_path;     ///< the session file
    std::string cwd;                 ///< where the session runs
    std::string tool_name;           ///< permission_request, post_tool_use: the tool
    boost::json::value tool_input{}; ///< permission_request, post_tool_use: its input
    std::string message;             ///< notification: what Claude Code says
    /// permission_request: how long the hook waits in all (at most HOOK_TIMEOUT_MAX).
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

/// Parses a hook request body `{"event":"PermissionRequest","input":{…the hook's stdin…},
/// "timeout_ms"?:N}`. @return the call, or bad_request naming the field at fault (a session id
/// that cannot be part of a seat id is refused).
[[nodiscard]] Result<HookCall> parse_hook_call(const boost::json::object& body);

/// Where a hooked prompt stands, as its waiting hook is told.
struct HookOutcome {
    /// pending: nobody answered yet (ask again); allow / deny: answered from some screen;
    /// closed: it ended without an answer from here (answered in the terminal, timed out, …).
    enum class State : std::uint8_t { pending, allow, deny, closed };
    State state{State::pending};
    std::string by;                     ///< allow / deny: who answered
    std::string message;                ///< deny: what Claude is told
    std::string reason;                 ///< closed: why
    boost::json::value updated_input{}; ///< allow: the input to run instead (null: as asked)

    /// `{"state":"pending"|"allow"|"deny"|"closed","by"?,"message"?,"reason"?,
    /// "updated_input"?}`.
    [[nodiscard]] boost::json::object json() const;
};

/// What a seat's hook bridge (the hub's HookBridge) asks of the seat that owns it. Every call
/// on the seat's strand.
class HookHost {
public:
    /// Shows hooked prompt `ask` to every viewer, among the seat's pending prompts.
    virtual void show_hooked(runtime::PermissionRequest ask) = 0;

    /// Withdraws hooked prompt `id`'s card: it ended without an answer from here, for `reason`
    /// (`by`: "terminal" when it was answered there, else "sluice").
    virtual void
    withdraw_hooked(const std::string& id, std::string by, const std::string& reason) = 0;

protected:
    HookHost() = default;
    HookHost(const HookHost&) = default;
    HookHost& operator=(const HookHost&) = default;
    HookHost(HookHost&&) = default;
    HookHost& operator=(HookHost&&) = default;
    ~HookHost() = default;
};

} // namespace sluice::hub
