// StreamEvent helpers: lanes, payloads, names and the JSON encoding of every event.
#include <sluice/core/event.hpp>

#include <boost/json.hpp>

#include <type_traits>

namespace sluice {

namespace json = boost::json;

namespace {

template <class... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

std::string_view outcome_name(session::Outcome o) noexcept {
    switch (o) {
    case session::Outcome::failed:
        return "failed";
    case session::Outcome::cancelled:
        return "cancelled";
    case session::Outcome::timed_out:
        return "timed_out";
    case session::Outcome::over_budget:
        return "over_budget";
    }
    return "failed";
}

std::optional<session::Outcome> outcome_from(std::string_view s) noexcept {
    if (s == "failed") {
        return session::Outcome::failed;
    }
    if (s == "cancelled") {
        return session::Outcome::cancelled;
    }
    if (s == "timed_out") {
        return session::Outcome::timed_out;
    }
    if (s == "over_budget") {
        return session::Outcome::over_budget;
    }
    return std::nullopt;
}

// Field readers for event_from_json: each returns false if the field is absent or mistyped.
bool read(const json::object& o, std::string_view key, std::string& out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string()) {
        return false;
    }
    out = std::string(v->get_string());
    return true;
}

bool read(const json::object& o, std::string_view key, bool& out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_bool()) {
        return false;
    }
    out = v->get_bool();
    return true;
}

bool read(const json::object& o, std::string_view key, std::uint64_t& out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return false;
    }
    if (v->is_uint64()) {
        out = v->get_uint64();
        return true;
    }
    if (v->is_int64() && v->get_int64() >= 0) {
        out = static_cast<std::uint64_t>(v->get_int64());
        return true;
    }
    return false;
}

// The session and agent half of event_from_json (split to keep each under the complexity limit).
std::optional<StreamEvent> session_event_from_json(const std::string& type, const json::object& f);

// std::get_if, not std::visit: visit may throw bad_variant_access, and these three are noexcept.
template <class Event>
auto* payload_of(Event& ev) noexcept {
    using Str = std::conditional_t<std::is_const_v<Event>, const std::string, std::string>;
    Str* p = nullptr;
    if (auto* text = std::get_if<llm::Text>(&ev)) {
        p = &text->text;
    } else if (auto* thinking = std::get_if<llm::Thinking>(&ev)) {
        p = &thinking->text;
    } else if (auto* tool = std::get_if<llm::ToolUseDelta>(&ev)) {
        p = &tool->delta;
    } else if (auto* result = std::get_if<llm::ToolResultDelta>(&ev)) {
        p = &result->delta;
    }
    return p;
}

} // namespace

std::optional<std::size_t> preview_bytes(const StreamEvent& ev) noexcept {
    const auto* p = payload_of(ev);
    return p != nullptr ? std::optional<std::size_t>{p->size()} : std::nullopt;
}

std::string_view preview_payload(const StreamEvent& ev) noexcept {
    const auto* p = payload_of(ev);
    return p != nullptr ? std::string_view{*p} : std::string_view{};
}

std::string* preview_payload_mut(StreamEvent& ev) noexcept {
    return payload_of(ev);
}

std::string_view event_type(const StreamEvent& ev) noexcept {
    static constexpr std::string_view NAMES[] = {
        "text",
        "thinking",
        "tool_use_start",
        "tool_use_delta",
        "tool_use",
        "tool_result",
        "tool_result_delta",
        "message_history",
        "usage",
        "done",
        "error",
        "notice",
        "subagent_start",
        "subagent_update",
        "subagent_done",
        "steering_delivered",
    };
    static_assert(std::size(NAMES) == std::variant_size_v<StreamEvent>);
    return NAMES[ev.index()];
}

json::value to_json(const StreamEvent& ev) {
    json::object o;
    o["type"] = event_type(ev);
    std::visit(
        Overloaded{
            [&](const llm::Text& e) { o["text"] = e.text; },
            [&](const llm::Thinking& e) { o["text"] = e.text; },
            [&](const llm::ToolUseStart& e) {
                o["tool_name"] = e.tool_name;
                o["tool_id"] = e.tool_id;
            },
            [&](const llm::ToolUseDelta& e) {
                o["tool_id"] = e.tool_id;
                o["delta"] = e.delta;
            },
            [&](const llm::ToolUse& e) {
                o["tool_name"] = e.tool_name;
                o["tool_id"] = e.tool_id;
                o["input"] = e.input;
            },
            [&](const llm::ToolResult& e) {
                o["tool_id"] = e.tool_id;
                o["result"] = e.result;
                o["is_error"] = e.is_error;
            },
            [&](const llm::ToolResultDelta& e) {
                o["tool_id"] = e.tool_id;
                o["delta"] = e.delta;
            },
            [&](const session::MessageHistory& e) {
                json::array a;
                if (e.messages) {
                    a.reserve(e.messages->size());
                    for (const auto& m : *e.messages) {
                        a.push_back(m ? *m : json::value{});
                    }
                }
                o["messages"] = std::move(a);
            },
            [&](const session::Usage& e) {
                o["input"] = e.input;
                o["output"] = e.output;
                o["cache_read"] = e.cache_read;
                o["cache_creation"] = e.cache_creation;
                o["model"] = e.model;
            },
            [&](const session::Done&) {},
            [&](const session::Error& e) {
                o["message"] = e.message;
                o["outcome"] = outcome_name(e.outcome);
            },
            [&](const session::Notice& e) { o["text"] = e.text; },
            [&](const agent::SubagentStart& e) {
                o["tool_id"] = e.tool_id;
                o["description"] = e.description;
            },
            [&](const agent::SubagentUpdate& e) {
                o["tool_id"] = e.tool_id;
                o["text"] = e.text;
            },
            [&](const agent::SubagentDone& e) {
                o["tool_id"] = e.tool_id;
                o["result"] = e.result;
                o["is_error"] = e.is_error;
            },
            [&](const agent::SteeringDelivered& e) { o["text"] = e.text; },
        },
        ev);
    return o;
}

std::optional<StreamEvent> event_from_json(const json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr) {
        return std::nullopt;
    }
    std::string type;
    if (!read(*o, "type", type)) {
        return std::nullopt;
    }
    const json::object& f = *o;
    if (type == "text") {
        llm::Text e;
        return read(f, "text", e.text) ? std::optional<StreamEvent>{std::move(e)} : std::nullopt;
    }
    if (type == "thinking") {
        llm::Thinking e;
        return read(f, "text", e.text) ? std::optional<StreamEvent>{std::move(e)} : std::nullopt;
    }
    if (type == "tool_use_start") {
        llm::ToolUseStart e;
        if (read(f, "tool_name", e.tool_name) && read(f, "tool_id", e.tool_id)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "tool_use_delta") {
        llm::ToolUseDelta e;
        if (read(f, "tool_id", e.tool_id) && read(f, "delta", e.delta)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "tool_use") {
        llm::ToolUse e;
        const auto* input = f.if_contains("input");
        if (read(f, "tool_name", e.tool_name) && read(f, "tool_id", e.tool_id)
            && input != nullptr) {
            e.input = *input;
            return e;
        }
        return std::nullopt;
    }
    if (type == "tool_result") {
        llm::ToolResult e;
        if (read(f, "tool_id", e.tool_id) && read(f, "result", e.result)
            && read(f, "is_error", e.is_error)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "tool_result_delta") {
        llm::ToolResultDelta e;
        if (read(f, "tool_id", e.tool_id) && read(f, "delta", e.delta)) {
            return e;
        }
        return std::nullopt;
    }
    return session_event_from_json(type, f);
}

namespace {

std::optional<StreamEvent> session_event_from_json(const std::string& type, const json::object& f) {
    if (type == "message_history") {
        const auto* msgs = f.if_contains("messages");
        if (msgs == nullptr || !msgs->is_array()) {
            return std::nullopt;
        }
        auto vec = std::make_shared<std::vector<session::HistoryMessage>>();
        for (const auto& m : msgs->get_array()) {
            vec->push_back(std::make_shared<const json::value>(m));
        }
        return session::MessageHistory{std::move(vec)};
    }
    if (type == "usage") {
        session::Usage e;
        if (read(f, "input", e.input) && read(f, "output", e.output)
            && read(f, "cache_read", e.cache_read) && read(f, "cache_creation", e.cache_creation)
            && read(f, "model", e.model)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "done") {
        return session::Done{};
    }
    if (type == "error") {
        session::Error e;
        std::string outcome;
        if (!read(f, "message", e.message) || !read(f, "outcome", outcome)) {
            return std::nullopt;
        }
        auto oc = outcome_from(outcome);
        if (!oc) {
            return std::nullopt;
        }
        e.outcome = *oc;
        return e;
    }
    if (type == "notice") {
        session::Notice e;
        return read(f, "text", e.text) ? std::optional<StreamEvent>{std::move(e)} : std::nullopt;
    }
    if (type == "subagent_start") {
        agent::SubagentStart e;
        if (read(f, "tool_id", e.tool_id) && read(f, "description", e.description)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "subagent_update") {
        agent::SubagentUpdate e;
        if (read(f, "tool_id", e.tool_id) && read(f, "text", e.text)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "subagent_done") {
        agent::SubagentDone e;
        if (read(f, "tool_id", e.tool_id) && read(f, "result", e.result)
            && read(f, "is_error", e.is_error)) {
            return e;
        }
        return std::nullopt;
    }
    if (type == "steering_delivered") {
        agent::SteeringDelivered e;
        return read(f, "text", e.text) ? std::optional<StreamEvent>{std::move(e)} : std::nullopt;
    }
    return std::nullopt;
}

} // namespace

} // namespace sluice
