// What the API's two files share: running work on a seat's strand or the hub from a handler,
// and the small request helpers (bodies, refusals, a seat's JSON). Private to src/server.
#pragma once

#include "impl.hpp"

#include <sluice/server/validate.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/url/url_view.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::api_detail {

// Runs `fn` on the seat's strand and hands its result back on the caller's executor.
// A plain function (not a coroutine) returning the awaitable of one async operation.
// Callers pass a NAMED callable: GCC 12 destroys a closure temporary created inside a
// co_await operand twice (found by valgrind: double release of its captures), so no closure
// temporary may appear in a co_await expression.
template <class Fn>
auto on_seat(hub::Seat& seat, const Fn& fn) {
    using R = decltype(fn());
    auto initiate = [&seat](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        net::post(seat.strand(), [h = std::move(handler), f = std::move(f), ex]() mutable {
            R r = f();
            net::post(
                ex, [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
        });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

// Runs `fn(done)` on the seat's strand, where `done(Result<void>)` may be called later (after
// a writer job, an agent's answer); the result comes back on the caller's executor. As for
// on_seat, callers pass a NAMED callable (GCC 12).
template <class Fn>
auto on_seat_later(hub::Seat& seat, const Fn& fn) {
    using R = hub::Result<void>;
    auto initiate = [&seat](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        net::post(seat.strand(), [h, f = std::move(f), ex]() mutable {
            f([h, ex](R r) {
                net::post(ex, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
            });
        });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

// A hub call of the shape `f(ex, done(R))`, awaited: `done` runs on the caller's executor.
template <class R, class Fn>
auto on_hub(const Fn& fn) {
    auto initiate = [](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        auto hp = std::make_shared<decltype(handler)>(std::move(handler));
        f(ex, [hp](R r) { std::move (*hp)(std::move(r)); });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

/// A seat's summary as JSON (`detail`: with the window and the agent's settings).
boost::json::object seat_json(const hub::SeatSummary& s, bool detail);

/// Parses a JSON object body; nullopt (and a message) when it is not one.
std::optional<boost::json::object> parse_body(const Request& req, std::string& why);

/// Reads an optional string field; false (and a message) when present but not a string.
bool string_field(
    const boost::json::object& o, std::string_view key, std::string& out, std::string& why);

/// 400 with `why`.
Response bad(const Request& req, std::string_view why);

/// The answer to a refusal (its code's status, its message).
Response bad(const Request& req, const Refusal& r);

/// 405, naming the method refused and the ones the route takes.
Response method_not_allowed(const Request& req, std::string_view allowed);

/// A POST's JSON object body; otherwise `refused` is set to the 405 or 400 answering it.
std::optional<boost::json::object> post_body(const Request& req, Response& refused);

/// /v1/seats/{id}[/{action}[/{arg}]]: a seat's own routes (seat_api.cpp); a mirror's commands
/// go to the owner.
net::awaitable<Response> seat_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts);

/// /v1/seats/{id}/subagents[/{agent}/history]: a Claude Code session's sub-agents (seat_api.cpp).
net::awaitable<Response> subagent_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts);

} // namespace sluice::server::api_detail
