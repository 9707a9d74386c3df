// AgentEvent: the frames an agent's protocol events are recorded as.
#include <sluice/runtime/agents/agent_events.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <utility>

namespace sluice::runtime {

namespace json = boost::json;

json::object PermissionRequest::row() const {
    json::object o{
        {"type", "system"},
        {"subtype", "permission_request"},
        {"request_id", request_id},
        {"tool_name", tool_name},
        {"tool_use_id", tool_use_id ? json::value(*tool_use_id) : json::value(nullptr)},
        {"input", input},
        {"title", title},
        {"decision_reason", decision_reason}};
    if (cwd) {
        o["cwd"] = *cwd;
    }
    if (hooked) {
        o["hooked"] = true;
    }
    return o;
}

std::string_view PermissionResolved::behavior_name(Behavior b) noexcept {
    switch (b) {
    case Behavior::allow:
        return "allow";
    case Behavior::deny:
        return "deny";
    case Behavior::withdrawn:
        return "withdrawn";
    }
    return "withdrawn";
}

json::object PermissionResolved::row() const {
    return stream_json::permission_resolved_row(request_id, behavior_name(behavior), by);
}

json::object event_row(AgentEvent event) {
    return std::visit(
        [](auto& e) -> json::object {
            if constexpr (requires { e.row(); }) {
                return e.row();
            } else {
                return std::move(e.row);
            }
        },
        event);
}

} // namespace sluice::runtime
