// stream-json decoding and encoding: pure functions over one line (no I/O).
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>

namespace sluice::runtime {

namespace json = boost::json;

const json::string* find_str(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    return v == nullptr ? nullptr : v->if_string();
}

std::string_view str_field(const json::object& o, std::string_view key) noexcept {
    const auto* s = find_str(o, key);
    return s == nullptr ? std::string_view{} : std::string_view(*s);
}

namespace stream_json {

namespace {

const json::object* object_at(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    return v == nullptr ? nullptr : v->if_object();
}

// A user row that carries a prompt (an echo of ours), not tool results.
bool is_prompt_row(const json::object& row) {
    const auto* m = object_at(row, "message");
    const auto* c = m == nullptr ? nullptr : m->if_contains("content");
    if (c == nullptr || !c->is_array()) {
        return true;
    }
    return std::none_of(c->get_array().begin(), c->get_array().end(), [](const json::value& b) {
        const auto* bo = b.if_object();
        return bo != nullptr && str_field(*bo, "type") == "tool_result";
    });
}

std::string line_of(const json::object& row) {
    std::string s = json::serialize(row);
    s += '\n';
    return s;
}

} // namespace

bool is_permission_mode(std::string_view mode) noexcept {
    constexpr std::array<std::string_view, 6> MODES{
        "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"};
    return std::find(MODES.begin(), MODES.end(), mode) != MODES.end();
}

Decoded Decoder::decode(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
        line.remove_suffix(1);
    }
    if (line.empty()) {
        return Ignored{};
    }
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec) {
        return Ignored{}; // not a row (a stray log line): not a frame
    }
    return decode_value(std::move(v));
}

Decoded Decoder::decode_value(json::value v) {
    if (!v.is_object()) {
        return Ignored{}; // not a row (a stray log line, an empty line): not a frame
    }
    auto& row = v.as_object();
    const auto type = str_field(row, "type");
    if (type == "control_request") {
        std::string id(str_field(row, "request_id"));
        return ControlRequest{std::move(id), std::move(row)};
    }
    if (type == "control_cancel_request") {
        return ControlCancel{std::string(str_field(row, "request_id"))};
    }
    if (type == "control_response") {
        const auto* r = object_at(row, "response");
        if (r == nullptr) {
            return Ignored{};
        }
        ControlResponse out{std::string(str_field(*r, "request_id")), {}, {}};
        if (str_field(*r, "subtype") == "success") {
            if (const auto* body = object_at(*r, "response")) {
                out.response = *body;
            }
        } else {
            out.error = std::string(str_field(*r, "error"));
            if (out.error.empty()) {
                out.error = "the agent refused the request";
            }
            if (const auto code = str_field(*r, "error_code"); !code.empty()) {
                out.error += " [" + std::string(code) + "]";
            }
        }
        return out;
    }
    if (type == "keep_alive") {
        return Ignored{};
    }
    if (type == "stream_event") {
        auto d = preview(row);
        if (auto* p = std::get_if<Preview>(&d)) {
            p->row = std::move(row);
        } else if (std::holds_alternative<StreamRow>(d)) {
            std::get<StreamRow>(d).row = std::move(row);
        }
        return d;
    }
    if (type == "user" && is_prompt_row(row)) {
        return Ignored{};
    }
    if (type == "result") {
        return TurnResult{std::move(row)};
    }
    return Frame{std::move(row)};
}

Decoded Decoder::preview(const json::object& row) {
    if (const auto* p = row.if_contains("parent_tool_use_id"); p != nullptr && !p->is_null()) {
        return StreamRow{}; // a sub-agent's partials: not this turn's preview
    }
    const auto* e = object_at(row, "event");
    if (e == nullptr) {
        return Ignored{};
    }
    const auto etype = str_field(*e, "type");
    std::int64_t index = -1;
    if (const auto* i = e->if_contains("index"); i != nullptr && i->is_int64()) {
        index = i->get_int64();
    }
    if (etype == "message_start") {
        tool_ids_.clear();
        return StreamRow{};
    }
    if (etype == "content_block_start") {
        const auto* c = object_at(*e, "content_block");
        if (c != nullptr && str_field(*c, "type") == "tool_use") {
            tool_ids_[index] = std::string(str_field(*c, "id"));
        }
        return StreamRow{};
    }
    if (etype != "content_block_delta") {
        return StreamRow{};
    }
    const auto* d = object_at(*e, "delta");
    if (d == nullptr) {
        return StreamRow{};
    }
    const auto dtype = str_field(*d, "type");
    if (dtype == "text_delta") {
        return Preview{llm::Text{std::string(str_field(*d, "text"))}};
    }
    if (dtype == "thinking_delta") {
        return Preview{llm::Thinking{std::string(str_field(*d, "thinking"))}};
    }
    if (dtype == "input_json_delta") {
        auto it = tool_ids_.find(index);
        return Preview{llm::ToolUseDelta{
            it == tool_ids_.end() ? std::string{} : it->second,
            std::string(str_field(*d, "partial_json"))}};
    }
    return StreamRow{};
}

std::string encode_prompt(std::string_view prompt) {
    return line_of(json::object{
        {"type", "user"},
        {"message", json::object{{"role", "user"}, {"content", prompt}}},
        {"parent_tool_use_id", nullptr}});
}

std::string encode_interrupt(std::string_view request_id) {
    return encode_control_request(request_id, json::object{{"subtype", "interrupt"}});
}

std::string encode_control_request(std::string_view request_id, json::object request) {
    return line_of(json::object{
        {"type", "control_request"}, {"request_id", request_id}, {"request", std::move(request)}});
}

std::string encode_control_success(std::string_view request_id, json::object response) {
    return line_of(json::object{
        {"type", "control_response"},
        {"response",
         json::object{
             {"subtype", "success"},
             {"request_id", request_id},
             {"response", std::move(response)}}}});
}

json::object permission_response(
    bool allow,
    std::string_view message,
    const json::value* updated_input,
    const json::value* original_input) {
    if (allow) {
        json::value input = updated_input != nullptr    ? *updated_input
                            : original_input != nullptr ? *original_input
                                                        : json::value(json::object{});
        return json::object{{"behavior", "allow"}, {"updatedInput", std::move(input)}};
    }
    return json::object{
        {"behavior", "deny"}, {"message", message.empty() ? std::string_view("denied") : message}};
}

std::string_view control_subtype(const ControlRequest& req) noexcept {
    const auto* q = object_at(req.row, "request");
    return q == nullptr ? std::string_view{} : str_field(*q, "subtype");
}

PermissionRequest permission_request(const json::object& req) {
    const auto* r = object_at(req, "request");
    static const json::object none;
    const json::object& q = r == nullptr ? none : *r;
    const auto field = [&q](std::string_view k) -> json::value {
        const auto* v = q.if_contains(k);
        return v == nullptr ? json::value(nullptr) : *v;
    };
    PermissionRequest out;
    out.request_id = std::string(str_field(req, "request_id"));
    out.tool_name = std::string(str_field(q, "tool_name"));
    if (const auto* id = find_str(q, "tool_use_id")) {
        out.tool_use_id = std::string(*id);
    }
    out.input = field("input");
    out.title = std::string(str_field(q, "title"));
    if (out.title.empty()) {
        out.title = std::string(str_field(q, "description"));
    }
    if (out.title.empty()) {
        out.title = "Allow " + out.tool_name + "?";
    }
    out.decision_reason = field("decision_reason");
    return out;
}

std::string encode_default_answer(const ControlRequest& req) {
    const auto subtype = control_subtype(req);
    if (subtype == "can_use_tool") {
        return encode_control_success(
            req.request_id,
            permission_response(
                false, "no one can answer permission prompts here", nullptr, nullptr));
    }
    if (subtype == "hook_callback") {
        return encode_control_success(req.request_id, json::object{});
    }
    if (subtype == "mcp_message") {
        json::object rpc{{"jsonrpc", "2.0"}};
        const auto* q = object_at(req.row, "request");
        if (const auto* m = q == nullptr ? nullptr : object_at(*q, "message")) {
            if (const auto* id = m->if_contains("id")) {
                rpc["id"] = *id;
            }
        }
        rpc["error"] = json::object{{"code", -32601}, {"message", "no such MCP server in sluice"}};
        return encode_control_success(
            req.request_id, json::object{{"mcp_response", std::move(rpc)}});
    }
    if (subtype == "elicitation") {
        return encode_control_success(req.request_id, json::object{{"action", "decline"}});
    }
    return encode_refusal(req.request_id);
}

std::optional<AgentEvent> frame_event(json::object& row) {
    const auto type = str_field(row, "type");
    if (type == "conversation_reset") {
        return ConversationReset{std::move(row)};
    }
    if (type != "system") {
        return std::nullopt;
    }
    const auto subtype = str_field(row, "subtype");
    if (subtype == "session_state_changed") {
        std::string state(str_field(row, "state"));
        return SessionStateChanged{std::move(state), std::move(row)};
    }
    if (const auto sid = init_session_id(row); !sid.empty()) {
        std::string id(sid);
        return SessionStarted{std::move(id), std::move(row)};
    }
    return std::nullopt;
}

json::object permission_request_row(const json::object& req) {
    return permission_request(req).row();
}

json::object permission_resolved_row(
    std::string_view request_id, std::string_view behavior, std::string_view by) {
    return json::object{
        {"type", "system"},
        {"subtype", "permission_resolved"},
        {"request_id", request_id},
        {"behavior", behavior},
        {"by", by}};
}

std::string notice_text(const json::object& row) {
    if (str_field(row, "type") != "system" || str_field(row, "subtype") != "api_retry") {
        return {};
    }
    const auto num = [&row](std::string_view k) -> std::int64_t {
        const auto* v = row.if_contains(k);
        if (v == nullptr || !v->is_number()) {
            return -1;
        }
        boost::system::error_code ec;
        const auto n = v->to_number<double>(ec);
        return ec ? -1 : static_cast<std::int64_t>(n);
    };
    std::string out = "retrying: ";
    if (const auto st = num("error_status"); st >= 0) {
        out += std::to_string(st) + " ";
    }
    const auto err = str_field(row, "error");
    out += err.empty() ? std::string_view("error") : err;
    if (const auto a = num("attempt"); a >= 0) {
        out += ", attempt " + std::to_string(a);
        if (const auto m = num("max_retries"); m >= 0) {
            out += " of " + std::to_string(m);
        }
    }
    if (const auto ms = num("retry_delay_ms"); ms >= 0) {
        out += " in " + std::to_string((ms + 500) / 1000) + " s";
    }
    return out;
}

std::string_view init_session_id(const json::object& row) noexcept {
    if (str_field(row, "type") != "system" || str_field(row, "subtype") != "init") {
        return {};
    }
    return str_field(row, "session_id");
}

std::string encode_refusal(std::string_view request_id) {
    return line_of(json::object{
        {"type", "control_response"},
        {"response",
         json::object{
             {"subtype", "error"},
             {"request_id", request_id},
             {"error", "sluice does not handle control requests"}}}});
}

} // namespace stream_json

} // namespace sluice::runtime
