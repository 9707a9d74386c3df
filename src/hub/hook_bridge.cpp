// HookBridge (hook_bridge.hpp): hooked prompts shown through the seat, the first answer handed
// to the hook that waits for it, and an answer given in the terminal noticed in the transcript.
#include "hook_bridge.hpp"

#include "ids.hpp"

#include <sluice/core/assert.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <set>

namespace sluice::hub {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view IN_TERMINAL = "answered in the terminal";

// Frames looked back through for the tool call a new hooked prompt asks about. Basis: Claude
// Code writes the assistant row with the tool_use before it asks, so it is among the newest
// rows; 256 bounds the JSON parsed when it is not there yet.
constexpr std::uint64_t HOOK_MATCH_FRAMES = 256;

struct ToolUse {
    std::string id, name;
    json::value input;
};

// The tool_use blocks of an assistant frame (none for other frames).
std::vector<ToolUse> tool_uses(const Frame& f) {
    std::vector<ToolUse> out;
    if (!f.facts().tool_call) {
        return out;
    }
    boost::system::error_code ec;
    auto v = json::parse(f.json(), ec);
    const auto* msg = !ec && v.is_object() ? v.get_object().if_contains("message") : nullptr;
    const auto* content =
        msg != nullptr && msg->is_object() ? msg->get_object().if_contains("content") : nullptr;
    if (content == nullptr || !content->is_array()) {
        return out;
    }
    for (const auto& b : content->get_array()) {
        const auto* o = b.if_object();
        if (o == nullptr) {
            continue;
        }
        const auto* type = o->if_contains("type");
        const auto* id = o->if_contains("id");
        const auto* name = o->if_contains("name");
        if (type == nullptr || !type->is_string() || type->get_string() != "tool_use"
            || id == nullptr || !id->is_string() || name == nullptr || !name->is_string()) {
            continue;
        }
        const auto* input = o->if_contains("input");
        out.push_back(ToolUse{
            std::string(id->get_string()),
            std::string(name->get_string()),
            input != nullptr ? *input : json::value()});
    }
    return out;
}

} // namespace

HookBridge::HookBridge(std::weak_ptr<HookHost> host, net::any_io_executor ex, const Feed& feed)
    : host_(std::move(host))
    , ex_(std::move(ex))
    , feed_(feed)
    , scanned_(feed.window().end())
    , scanned_epoch_(feed.epoch()) {
}

bool HookBridge::claimed(const std::string& tool_use_id) const {
    return std::any_of(pending_.begin(), pending_.end(), [&](const auto& kv) {
        return kv.second.tool_use_id == tool_use_id;
    });
}

// The newest call of `name` with `input` in the window's last frames that no other prompt
// claims, skipping those already answered unless `answered_too`.
std::optional<HookBridge::Found> HookBridge::find_tool_use(
    const std::string& name, const json::value& input, bool answered_too) const {
    const auto& w = feed_.window();
    std::set<std::string> answered;
    const auto stop = w.end() - std::min(w.size(), HOOK_MATCH_FRAMES);
    for (auto seq = w.end(); seq > stop; --seq) {
        const auto& f = w.at(seq - 1);
        answered.insert(f->facts().results_for.begin(), f->facts().results_for.end());
        for (auto& t : tool_uses(*f)) {
            const bool done = answered.contains(t.id);
            if (t.name == name && t.input == input && (answered_too || !done) && !claimed(t.id)) {
                return Found{t.id, done};
            }
        }
    }
    return std::nullopt;
}

std::string HookBridge::call(const HookCall& call) {
    hooked_ = true;
    std::vector<std::string> closing;
    std::string id;
    switch (call.event) {
    case HookEvent::permission_request: {
        id = new_id("h");
        Prompt p;
        p.tool_name = call.tool_name;
        p.input = call.tool_input;
        if (auto found = find_tool_use(call.tool_name, call.tool_input)) {
            p.tool_use_id = found->id;
        }
        p.unread = !feed_.ready();
        const auto now = Clock::now();
        p.deadline = now + call.timeout;
        p.gone_at = now + HOOK_GONE_AFTER;
        p.timer = std::make_unique<net::steady_timer>(ex_);
        runtime::PermissionRequest ask;
        ask.request_id = id;
        ask.tool_name = call.tool_name;
        ask.tool_use_id = p.tool_use_id;
        ask.input = call.tool_input;
        ask.title = "Allow " + call.tool_name + "?";
        if (!call.cwd.empty()) {
            ask.cwd = call.cwd;
        }
        ask.hooked = true;
        pending_.emplace(id, std::move(p));
        arm(id);
        if (auto host = host_.lock()) {
            host->show_hooked(std::move(ask));
        }
        break;
    }
    case HookEvent::notification:
        waiting_ = true;
        break;
    case HookEvent::session_start:
        waiting_ = false;
        break;
    case HookEvent::stop:
    case HookEvent::session_end:
        // The turn is over: a prompt still open was answered in the terminal.
        waiting_ = false;
        for (const auto& [rid, p] : pending_) {
            closing.push_back(rid);
        }
        break;
    case HookEvent::post_tool_use:
        for (const auto& [rid, p] : pending_) {
            if (p.tool_name == call.tool_name && p.input == call.tool_input) {
                closing.push_back(rid);
                break;
            }
        }
        break;
    }
    for (const auto& rid : closing) {
        close(rid, call.event == HookEvent::session_end ? "the session ended" : IN_TERMINAL.data());
    }
    if (call.event == HookEvent::session_end) {
        hooked_ = false;
    }
    return id;
}

void HookBridge::seen() {
    const auto& w = feed_.window();
    std::vector<std::string> answered;
    if (scanned_epoch_ != feed_.epoch() || scanned_ < w.first() || scanned_ > w.end()) {
        scanned_ = w.end(); // another numbering: only what comes next is looked at
        scanned_epoch_ = feed_.epoch();
        for (auto& [rid, p] : pending_) {
            if (p.tool_use_id) {
                continue;
            }
            // A prompt that came before its file was read: Claude Code wrote the call before
            // it asked, so the newest such call is this prompt's, and a result for it means
            // the terminal answered first.
            auto found = find_tool_use(p.tool_name, p.input, p.unread);
            if (found && found->answered) {
                answered.push_back(rid);
            } else if (found) {
                p.tool_use_id = found->id;
            }
            p.unread = false;
        }
    }
    if (scanned_ < w.end()) {
        waiting_ = false; // rows after a Notification: Claude Code goes on
    }
    for (auto seq = scanned_; seq < w.end() && !pending_.empty(); ++seq) {
        const auto& f = w.at(seq);
        for (auto& t : tool_uses(*f)) {
            for (auto& [rid, p] : pending_) {
                if (!p.tool_use_id && p.tool_name == t.name && p.input == t.input) {
                    p.tool_use_id = t.id;
                    break;
                }
            }
        }
        for (const auto& r : f->facts().results_for) {
            for (const auto& [rid, p] : pending_) {
                if (p.tool_use_id == r) {
                    answered.push_back(rid);
                }
            }
        }
    }
    scanned_ = w.end();
    for (const auto& rid : answered) {
        close(rid, std::string(IN_TERMINAL));
    }
}

void HookBridge::answered(const runtime::PermissionAnswer& answer, const std::string& by) {
    HookOutcome o;
    o.state = answer.allow ? HookOutcome::State::allow : HookOutcome::State::deny;
    o.by = by;
    o.message = answer.message;
    if (answer.updated_input) {
        o.updated_input = *answer.updated_input;
    }
    ended(answer.request_id, std::move(o));
}

void HookBridge::close(const std::string& id, const std::string& reason) {
    if (!pending_.contains(id)) {
        return;
    }
    HookOutcome o;
    o.state = HookOutcome::State::closed;
    o.reason = reason;
    ended(id, std::move(o));
    if (auto host = host_.lock()) {
        host->withdraw_hooked(id, reason == IN_TERMINAL ? "terminal" : "sluice", reason);
    }
}

void HookBridge::ended(const std::string& id, HookOutcome outcome) {
    auto node = pending_.extract(id);
    if (node.empty()) {
        return;
    }
    auto& p = node.mapped();
    p.timer->cancel();
    bool told = false;
    for (auto& w : p.waiters) {
        if (w->done) {
            w->timer->cancel();
            std::exchange(w->done, nullptr)(outcome);
            told = true;
        }
    }
    if (!told) {
        // Its hook is between two waits: the next one takes it.
        ended_.emplace_back(id, std::move(outcome));
        if (ended_.size() > HOOK_OUTCOMES_KEPT) {
            ended_.pop_front();
        }
    }
}

void HookBridge::arm(const std::string& id) {
    auto& p = pending_.at(id);
    p.timer->expires_at(std::min(p.deadline, p.gone_at));
    p.timer->async_wait([weak = weak_from_this(), id](boost::system::error_code ec) {
        auto self = weak.lock();
        if (ec || !self) {
            return;
        }
        if (auto host = self->host_.lock()) { // the seat stays while its bridge works
            self->expired(id);
        }
    });
}

void HookBridge::expired(const std::string& id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) {
        return;
    }
    const auto now = Clock::now();
    const auto& p = it->second;
    const bool waited_on =
        std::any_of(p.waiters.begin(), p.waiters.end(), [](const auto& w) { return !!w->done; });
    if (now >= p.deadline) {
        close(id, "nobody answered within the hook's timeout");
    } else if (now >= p.gone_at && !waited_on) {
        close(id, "the hook stopped waiting");
    } else {
        arm(id);
    }
}

void HookBridge::wait(
    const std::string& request_id, std::chrono::milliseconds wait, WaitDone done) {
    auto& ended = ended_;
    for (auto it = ended.begin(); it != ended.end(); ++it) {
        if (it->first == request_id) {
            auto outcome = std::move(it->second);
            ended.erase(it);
            done(std::move(outcome));
            return;
        }
    }
    auto it = pending_.find(request_id);
    if (it == pending_.end()) {
        done(Failure::of(errc::not_found, "no such hooked prompt: " + request_id));
        return;
    }
    auto& p = it->second;
    const auto until = std::min(Clock::now() + wait, p.deadline);
    p.gone_at = until + HOOK_GONE_AFTER;
    std::erase_if(p.waiters, [](const auto& w) { return !w->done; });
    auto w = std::make_shared<Waiter>();
    w->done = std::move(done);
    w->timer = std::make_unique<net::steady_timer>(ex_);
    w->timer->expires_at(until);
    w->timer->async_wait([weak = weak_from_this(), waiter = std::weak_ptr<Waiter>(w), request_id](
                             boost::system::error_code ec) {
        auto self = weak.lock();
        auto me = waiter.lock();
        auto host = self ? self->host_.lock() : nullptr; // the seat stays while its bridge works
        if (ec || !host || !me || !me->done) {
            return;
        }
        const auto found = self->pending_.find(request_id);
        if (found != self->pending_.end() && Clock::now() >= found->second.deadline) {
            self->expired(request_id); // closes it: this wait gets that
            return;
        }
        std::exchange(me->done, nullptr)(HookOutcome{}); // still pending: ask again
    });
    p.waiters.push_back(std::move(w));
}

void HookBridge::closed() {
    std::vector<std::string> ids;
    for (const auto& [rid, p] : pending_) {
        ids.push_back(rid);
    }
    for (const auto& rid : ids) {
        HookOutcome o;
        o.state = HookOutcome::State::closed;
        o.reason = "the hub is stopping";
        ended(rid, std::move(o));
    }
}

} // namespace sluice::hub
