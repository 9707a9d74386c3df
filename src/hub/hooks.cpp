// Claude Code's hook calls parsed, and a hooked prompt's outcome as JSON (hub/hooks.hpp).
#include "ids.hpp"

#include <sluice/hub/hooks.hpp>

#include <boost/json.hpp>

#include <array>
#include <utility>

namespace sluice::hub {

namespace json = boost::json;

namespace {

constexpr std::array<std::pair<HookEvent, std::string_view>, 6> EVENT_NAMES{{
    {HookEvent::permission_request, "PermissionRequest"},
    {HookEvent::notification, "Notification"},
    {HookEvent::stop, "Stop"},
    {HookEvent::session_start, "SessionStart"},
    {HookEvent::session_end, "SessionEnd"},
    {HookEvent::post_tool_use, "PostToolUse"},
}};

// A string field of `o` (empty when absent); false when present and not a string.
bool take_string(const json::object& o, std::string_view key, std::string& out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
        return true;
    }
    if (!v->is_string()) {
        return false;
    }
    out = std::string(v->get_string());
    return true;
}

Failure refuse(std::string why) {
    return Failure::of(errc::bad_request, std::move(why));
}

} // namespace

std::optional<HookEvent> hook_event(std::string_view name) noexcept {
    for (const auto& [e, n] : EVENT_NAMES) {
        if (n == name) {
            return e;
        }
    }
    return std::nullopt;
}

std::string_view hook_event_name(HookEvent e) noexcept {
    for (const auto& [ev, n] : EVENT_NAMES) {
        if (ev == e) {
            return n;
        }
    }
    return "Notification";
}

Result<HookCall> parse_hook_call(const json::object& body) {
    HookCall call;
    std::string name;
    if (!take_string(body, "event", name) || name.empty()) {
        return refuse("field 'event' must name a hook event (e.g. \"PermissionRequest\")");
    }
    auto ev = hook_event(name);
    if (!ev) {
        return refuse(
            "field 'event': sluice takes PermissionRequest, Notification, Stop, SessionStart, "
            "SessionEnd and PostToolUse, not '"
            + name + "'");
    }
    call.event = *ev;
    const auto* in = body.if_contains("input");
    if (in == nullptr || !in->is_object()) {
        return refuse("field 'input' must be the hook's input, a JSON object");
    }
    const auto& input = in->get_object();
    if (!take_string(input, "session_id", call.session_id) || call.session_id.empty()
        || !valid_id("c-" + call.session_id)) {
        return refuse("input.session_id must be a Claude Code session id");
    }
    if (!take_string(input, "transcript_path", call.transcript_path)
        || !take_string(input, "cwd", call.cwd) || !take_string(input, "tool_name", call.tool_name)
        || !take_string(input, "message", call.message)) {
        return refuse("input.transcript_path, cwd, tool_name and message must be strings");
    }
    if (const auto* ti = input.if_contains("tool_input")) {
        call.tool_input = *ti;
    }
    if (call.event == HookEvent::permission_request && call.tool_name.empty()) {
        return refuse("a PermissionRequest needs input.tool_name");
    }
    if (const auto* t = body.if_contains("timeout_ms"); t != nullptr && !t->is_null()) {
        if (!t->is_int64() && !t->is_uint64()) {
            return refuse("field 'timeout_ms' must be a whole number of milliseconds");
        }
        const auto ms = t->is_int64() ? t->get_int64() : static_cast<std::int64_t>(t->get_uint64());
        if (ms <= 0) {
            return refuse("field 'timeout_ms' must be positive");
        }
        call.timeout = std::min(
            std::chrono::milliseconds(ms),
            std::chrono::duration_cast<std::chrono::milliseconds>(HOOK_TIMEOUT_MAX));
    }
    return call;
}

json::object HookOutcome::json() const {
    static constexpr std::array<std::string_view, 4> STATES{"pending", "allow", "deny", "closed"};
    json::object o{{"state", STATES.at(static_cast<std::size_t>(state))}};
    if (!by.empty()) {
        o["by"] = by;
    }
    if (state == State::deny) {
        o["message"] = message;
    }
    if (!reason.empty()) {
        o["reason"] = reason;
    }
    if (state == State::allow && !updated_input.is_null()) {
        o["updated_input"] = updated_input;
    }
    return o;
}

} // namespace sluice::hub
