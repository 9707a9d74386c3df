// PermissionPrompts: pending and resolved permission prompts (hub/permission_prompts.hpp).
#include <sluice/hub/permission_prompts.hpp>

#include <boost/json.hpp>

namespace sluice::hub {

bool PermissionPrompts::note(const runtime::AgentEvent& event) {
    if (const auto* ask = std::get_if<runtime::PermissionRequest>(&event)) {
        if (ask->request_id.empty()) {
            return false;
        }
        pending_[ask->request_id] = boost::json::serialize(ask->row());
    } else if (const auto* done = std::get_if<runtime::PermissionResolved>(&event)) {
        if (done->request_id.empty() || pending_.erase(done->request_id) == 0) {
            return false;
        }
        resolved_.emplace_back(
            done->request_id,
            std::string(runtime::PermissionResolved::behavior_name(done->behavior)) + " by "
                + done->by);
        if (resolved_.size() > RESOLVED_PERMISSIONS_KEPT) {
            resolved_.pop_front();
        }
    } else {
        return false;
    }
    std::string arr = "[";
    for (const auto& [rid, text] : pending_) {
        if (arr.size() > 1) {
            arr += ',';
        }
        arr += text;
    }
    arr += ']';
    json_ = std::move(arr);
    return true;
}

std::optional<Failure> PermissionPrompts::refuse_answer(const std::string& request_id) const {
    if (pending_.contains(request_id)) {
        return std::nullopt;
    }
    for (const auto& [id, how] : resolved_) {
        if (id == request_id) {
            return Failure::of(errc::conflict, "that prompt was already answered: " + how);
        }
    }
    return Failure::of(errc::not_found, "no such permission prompt: " + request_id);
}

std::optional<std::string> PermissionPrompts::first_pending() const {
    if (pending_.empty()) {
        return std::nullopt;
    }
    return pending_.begin()->first;
}

} // namespace sluice::hub
