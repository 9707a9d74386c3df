// A terminal Claude Code session's hooks (`sluice hook claude EVENT`): POST /v1/hooks/claude
// reports an event (a PermissionRequest becomes a prompt on the session's seat) and POST
// /v1/hooks/claude/wait is the long-poll its hook waits on for the answer. Owner only: every
// POST needs the owner's token (guard.cpp), so a viewer's hook request is a 403.
#include "api_detail.hpp"

#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>

namespace sluice::server::api_detail {

namespace json = boost::json;

namespace {

// {"event","input":{…},"timeout_ms"?} → 200 {"seat","request_id"} (request_id null but for a
// PermissionRequest).
net::awaitable<Response> report_route(Server::Impl& s, const Request& req, json::object body) {
    auto call = hub::parse_hook_call(body);
    if (!call) {
        co_return error_response(req, call.error().code, call.error().message);
    }
    auto seat = s.hub.hooked_seat(*call);
    if (!seat) {
        co_return error_response(req, seat.error().code, seat.error().message);
    }
    auto id = (*seat)->id();
    auto op = (*seat)->async_hook(std::move(*call), net::use_awaitable); // named: GCC 12
    auto r = co_await std::move(op);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req,
        200,
        json::serialize(json::object{
            {"seat", id}, {"request_id", r->empty() ? json::value(nullptr) : json::value(*r)}}));
}

// {"seat","request_id","wait_ms"?} → 200 the prompt's outcome (hub::HookOutcome::json), after
// at most wait_ms (and at most half the header timeout: a response must be written before the
// connection's read deadline passes).
net::awaitable<Response> wait_route(Server::Impl& s, const Request& req, const json::object& body) {
    std::string seat_id;
    std::string request_id;
    std::string why;
    if (!string_field(body, "seat", seat_id, why)
        || !string_field(body, "request_id", request_id, why) || seat_id.empty()
        || request_id.empty()) {
        co_return bad(req, why.empty() ? "fields 'seat' and 'request_id' are required" : why);
    }
    std::chrono::milliseconds wait{0};
    if (const auto* w = body.if_contains("wait_ms"); w != nullptr && !w->is_null()) {
        if (!w->is_int64() || w->get_int64() < 0) {
            co_return bad(req, "field 'wait_ms' must be a non-negative whole number");
        }
        wait = std::chrono::milliseconds(w->get_int64());
    }
    const auto cap = std::max(
        std::chrono::milliseconds(100),
        std::chrono::duration_cast<std::chrono::milliseconds>(s.cfg.header_timeout) / 2);
    auto seat = s.hub.find(seat_id);
    if (!seat) {
        co_return error_response(req, make_error_code(errc::not_found), "no such seat: " + seat_id);
    }
    auto op = seat->async_hook_wait(request_id, std::min(wait, cap), net::use_awaitable);
    auto r = co_await std::move(op);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(req, 200, json::serialize(r->json()));
}

} // namespace

net::awaitable<Response>
hook_routes(Server::Impl& s, const Request& req, const std::vector<std::string>& parts) {
    const bool report = parts.size() == 3 && parts[2] == "claude";
    const bool wait = parts.size() == 4 && parts[2] == "claude" && parts[3] == "wait";
    if (!report && !wait) {
        co_return error_response(req, make_error_code(errc::not_found), "no such route");
    }
    Response refused;
    auto body = post_body(req, refused);
    if (!body) {
        co_return refused;
    }
    if (report) {
        co_return co_await report_route(s, req, std::move(*body));
    }
    co_return co_await wait_route(s, req, *body);
}

} // namespace sluice::server::api_detail
