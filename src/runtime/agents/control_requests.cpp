// ControlRequests: the agent's permission prompts and sluice's settings requests, still open.
#include "agents/control_requests.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <iterator>
#include <utility>

namespace sluice::runtime::detail {

namespace json = boost::json;

void set_flag(std::vector<std::string>& argv, std::string_view flag, const std::string& value) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    if (it != argv.end()) {
        const auto value_end = std::next(it) == argv.end() ? std::next(it) : std::next(it, 2);
        it = argv.erase(it, value_end);
    }
    if (!value.empty()) {
        it = argv.insert(it, std::string(flag));
        argv.insert(std::next(it), value);
    }
}

// ---- the agent's requests ----------------------------------------------------------------

ControlRequests::Taken
ControlRequests::on_request(ProcId proc, const stream_json::ControlRequest& req, bool host) {
    if (host && stream_json::control_subtype(req) == "can_use_tool") {
        auto prompt = stream_json::permission_request(req.row);
        const auto* q = req.row.if_contains("request");
        const auto* input =
            q != nullptr && q->is_object() ? q->get_object().if_contains("input") : nullptr;
        prompts_[req.request_id] =
            Prompt{proc, input == nullptr ? json::value(json::object{}) : *input};
        return {std::move(prompt), {}};
    }
    return {std::nullopt, stream_json::encode_default_answer(req)};
}

std::optional<Outgoing> ControlRequests::answer(const PermissionAnswer& a) {
    auto it = prompts_.find(a.request_id);
    if (it == prompts_.end()) {
        return std::nullopt; // withdrawn, or its turn ended: nobody waits for it
    }
    auto p = std::move(it->second);
    prompts_.erase(it);
    const auto* updated = a.updated_input ? &*a.updated_input : nullptr;
    return Outgoing{
        p.proc,
        stream_json::encode_control_success(
            a.request_id, stream_json::permission_response(a.allow, a.message, updated, &p.input))};
}

std::optional<PermissionResolved> ControlRequests::withdraw(const std::string& id) {
    if (prompts_.erase(id) == 0) {
        return std::nullopt;
    }
    return PermissionResolved{id, PermissionResolved::Behavior::withdrawn, "agent"};
}

std::string ControlRequests::next_id(std::string_view what) {
    return "sluice-" + std::string(what) + "-" + std::to_string(++request_seq_);
}

// ---- sluice's settings requests ------------------------------------------------------------

ControlRequests::ChangeId ControlRequests::open_change(Agent::SettingsDone done) {
    const auto c = ++change_seq_;
    changes_[c].done = std::move(done);
    return c;
}

std::string ControlRequests::ask(
    ChangeId c, ProcId proc, std::string flag, std::string value, json::object request) {
    auto id = next_id("settings");
    asked_[id] = Asked{proc, std::move(flag), std::move(value), c};
    ++changes_[c].left;
    return stream_json::encode_control_request(id, std::move(request));
}

bool ControlRequests::settle_if_done(ChangeId c) {
    auto it = changes_.find(c);
    if (it != changes_.end() && it->second.left > 0) {
        return false;
    }
    settle(c); // nothing when it ended already
    return true;
}

void ControlRequests::settle(ChangeId c) {
    auto it = changes_.find(c);
    if (it == changes_.end()) {
        return;
    }
    auto change = std::move(it->second);
    changes_.erase(it);
    if (change.done) {
        change.done({std::move(change.error), std::move(change.model)});
    }
}

void ControlRequests::answered(
    const std::string& id,
    std::string error,
    std::vector<std::string>& argv,
    const json::object& response) {
    auto it = asked_.find(id);
    if (it == asked_.end()) {
        return; // an interrupt's answer, or one nobody waits for any more
    }
    auto a = std::move(it->second);
    asked_.erase(it);
    auto& change = changes_[a.change];
    if (error.empty()) {
        // Claude Code answers set_model with the model it resolved the name to ({"model":
        // "claude-…"}): that is what runs, so later processes are started with it too.
        const auto* m = response.if_contains("model");
        if (a.flag == "--model" && m != nullptr && m->is_string() && !m->get_string().empty()) {
            change.model = std::string(m->get_string());
            if (!a.value.empty()) {
                a.value = change.model; // "default" stays no flag: the session's own default
            }
        }
        set_flag(argv, a.flag, a.value);
    } else if (change.error.empty()) {
        change.error = std::move(error);
    }
    if (--change.left == 0) {
        settle(a.change);
    }
}

template <class Pred>
void ControlRequests::fail_where(Pred pred, const char* why, std::vector<std::string>& argv) {
    std::vector<std::string> ids;
    for (const auto& [id, a] : asked_) {
        if (pred(a)) {
            ids.push_back(id);
        }
    }
    for (const auto& id : ids) {
        answered(id, why, argv);
    }
}

void ControlRequests::expire(ChangeId c, const char* why, std::vector<std::string>& argv) {
    fail_where([c](const Asked& a) { return a.change == c; }, why, argv);
}

void ControlRequests::gone(
    std::optional<ProcId> proc, const char* why, std::vector<std::string>& argv) {
    fail_where([proc](const Asked& a) { return !proc || a.proc == *proc; }, why, argv);
}

} // namespace sluice::runtime::detail
