// Web Push routes: GET /v1/push/key (the VAPID public key), POST and GET
// /v1/push/subscriptions, DELETE /v1/push/subscriptions/{id}, POST
// /v1/push/subscriptions/{id}/test. A subscription belongs to the token that made it; a viewer
// token may make one (its one act), scoped to the seats it watches.
#include "api_detail.hpp"

#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

namespace sluice::server::api_detail {

namespace json = boost::json;

namespace {

json::object listed(const push::Subscription& sub) {
    json::object o{
        {"id", sub.id},
        {"endpoint", sub.endpoint},
        {"role", sub.viewer ? "viewer" : "owner"},
        {"created", sub.created}};
    if (!sub.seat.empty()) {
        o["seat"] = sub.seat;
    }
    return o;
}

// {"endpoint","keys":{"p256dh","auth"},"expirationTime"?} (a browser's PushSubscription) → 201
// {"id", …}.
net::awaitable<Response>
subscribe_route(push::NotifySender& sender, const Request& req, const Access& who) {
    std::string why;
    auto body = parse_body(req, why);
    if (!body) {
        co_return bad(req, why);
    }
    std::string endpoint;
    std::string p256dh;
    std::string secret;
    if (!string_field(*body, "endpoint", endpoint, why)) {
        co_return bad(req, why);
    }
    const auto* keys = body->if_contains("keys");
    if (keys == nullptr || !keys->is_object()) {
        co_return bad(
            req,
            "field 'keys' must be an object with 'p256dh' and 'auth' (a browser's "
            "PushSubscription.toJSON())");
    }
    if (!string_field(keys->get_object(), "p256dh", p256dh, why)
        || !string_field(keys->get_object(), "auth", secret, why)) {
        co_return bad(req, "in field 'keys': " + why);
    }
    push::Subscription sub;
    if (auto ok = push::check_subscription(endpoint, p256dh, secret, sub); !ok) {
        co_return bad(req, ok.error().message);
    }
    sub.owner = who.token_digest;
    sub.viewer = who.grant.role == auth::Role::viewer;
    sub.seat = sub.viewer ? who.grant.seat : std::string();
    auto op = sender.async_subscribe(std::move(sub), net::use_awaitable); // named: GCC 12
    auto stored = co_await std::move(op);
    if (!stored) {
        co_return error_response(req, stored.error().code, stored.error().message);
    }
    co_return json_response(req, 201, json::serialize(listed(*stored)));
}

} // namespace

net::awaitable<Response> push_routes(
    Server::Impl& s, const Request& req, const std::vector<std::string>& parts, const Access& who) {
    if (!s.cfg.push) {
        co_return error_response(
            req, make_error_code(errc::not_found), "Web Push is not enabled on this hub");
    }
    auto& sender = *s.cfg.push;
    const auto method = req.method();
    const bool read = method == http::verb::get || method == http::verb::head;
    if (parts.size() == 3 && parts[2] == "key") {
        if (!read) {
            co_return method_not_allowed(req, "GET");
        }
        co_return json_response(
            req, 200, json::serialize(json::object{{"public_key", sender.public_key()}}));
    }
    if (parts.size() == 3 && parts[2] == "subscriptions") {
        if (read) {
            json::array arr;
            for (const auto& sub : sender.subscriptions(who.token_digest, false)) {
                arr.push_back(listed(sub));
            }
            co_return json_response(
                req, 200, json::serialize(json::object{{"subscriptions", std::move(arr)}}));
        }
        if (method == http::verb::post) {
            co_return co_await subscribe_route(sender, req, who);
        }
        co_return method_not_allowed(req, "GET, POST");
    }
    if (parts.size() == 4 && parts[2] == "subscriptions") {
        if (method != http::verb::delete_) {
            co_return method_not_allowed(req, "DELETE");
        }
        // The owner may remove any subscription; a viewer its own only.
        const bool all = who.grant.role == auth::Role::owner;
        auto op = sender.async_unsubscribe(parts[3], who.token_digest, all, net::use_awaitable);
        auto gone = co_await std::move(op);
        if (!gone) {
            co_return error_response(req, gone.error().code, gone.error().message);
        }
        Response res = json_response(req, 204, "");
        res.set(http::field::content_type, "application/json");
        co_return res;
    }
    if (parts.size() == 5 && parts[2] == "subscriptions" && parts[4] == "test") {
        // One "notifications work" push to this subscription alone; the token that made it only
        // (another's is a 404, as if it did not exist). 202: queued, not yet delivered.
        if (method != http::verb::post) {
            co_return method_not_allowed(req, "POST");
        }
        auto op = sender.async_send_test(parts[3], who.token_digest, net::use_awaitable);
        auto queued = co_await std::move(op); // named: GCC 12
        if (!queued) {
            co_return error_response(req, queued.error().code, queued.error().message);
        }
        co_return json_response(
            req, 202, json::serialize(json::object{{"queued", true}, {"kind", "test"}}));
    }
    co_return error_response(req, make_error_code(errc::not_found), "no such route under /v1/push");
}

} // namespace sluice::server::api_detail
