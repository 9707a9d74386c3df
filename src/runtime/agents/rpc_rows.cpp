// What the JSON-RPC agents (codex, acp) share.
#include "agents/rpc_rows.hpp"

#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <utility>

namespace sluice::runtime::detail {

namespace json = boost::json;

namespace {

// Basis: the first bytes of a line that is not JSON-RPC, enough to recognise it in an error line.
constexpr std::size_t BAD_LINE_SHOWN_BYTES = 200;

const json::object& empty_object() {
    static const json::object none;
    return none;
}

} // namespace

std::int64_t int_field(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return 0;
    }
    if (v->is_int64()) {
        return v->get_int64();
    }
    if (v->is_uint64()) {
        return static_cast<std::int64_t>(v->get_uint64());
    }
    if (v->is_double()) {
        return static_cast<std::int64_t>(v->get_double());
    }
    return 0;
}

const json::object* object_field(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

const json::array* array_field(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

json::object tool_result_row(std::string id, std::string content, bool is_error) {
    return json::object{
        {"type", "user"},
        {"message",
         json::object{
             {"role", "user"},
             {"content",
              json::array{json::object{
                  {"type", "tool_result"},
                  {"tool_use_id", std::move(id)},
                  {"content", std::move(content)},
                  {"is_error", is_error}}}}}}};
}

RpcLine read_rpc_line(const json::value& line, bool malformed, std::string& bad) {
    RpcLine r;
    if (malformed || (!line.is_null() && !line.is_object())) {
        bad = line.is_null() ? std::string("(not JSON)") : json::serialize(line);
        if (bad.size() > BAD_LINE_SHOWN_BYTES) {
            bad.resize(BAD_LINE_SHOWN_BYTES);
        }
        return r;
    }
    if (line.is_null()) {
        r.kind = RpcLine::Kind::blank;
        return r;
    }
    const auto& msg = line.get_object();
    const auto* method = find_str(msg, "method");
    const auto* id = msg.if_contains("id");
    const auto* params = object_field(msg, "params");
    if (method != nullptr) {
        r.kind = id != nullptr ? RpcLine::Kind::request : RpcLine::Kind::notification;
        r.method = *method;
        r.id = id;
        r.params = params != nullptr ? params : &empty_object();
        return r;
    }
    if (id == nullptr || !id->is_int64()) {
        return r; // an answer to nothing we asked: ignored
    }
    r.kind = RpcLine::Kind::answer;
    r.answer_id = id->get_int64();
    if (const auto* e = object_field(msg, "error")) {
        r.error = std::string(str_field(*e, "message"));
        if (r.error.empty()) {
            r.error = json::serialize(*e);
        }
    }
    const auto* result = object_field(msg, "result");
    r.result = result != nullptr ? result : &empty_object();
    return r;
}

} // namespace sluice::runtime::detail
