// The HTTP session, generic over the stream (tcp_stream in the server, test::stream in the
// failure-matrix tests): read with limits and timeouts, authorize, route, stop at shutdown.
// Included only by the .cpp files that instantiate it.
#pragma once

#include "impl.hpp"
#include "sse_stream.hpp"
#include "streams_impl.hpp"

#include <sluice/server/errors.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

#include <array>
#include <vector>

namespace sluice::server {

namespace session_detail {

// Which seat a streaming route names, if the target is /v1/seats/{id}/{events|ws}.
std::optional<std::pair<std::string, std::string>> stream_route(const boost::urls::url_view& url);

// Where the session stands, for the stop hook (touched on the connection's strand only).
enum class Phase : std::uint8_t { reading, busy, streaming };

// Closes after an early error answer without resetting the peer: stop sending, then read and
// discard what the client is still sending (bounded in bytes and time), so it can read our
// answer before the connection goes (a reset would destroy the unread response).
template <class Stream>
net::awaitable<void> lingering_close(Stream& stream) {
    using net::as_tuple;
    using net::use_awaitable;
    StreamOps<Stream>::shutdown_send(stream);
    StreamOps<Stream>::expires_after(stream, std::chrono::seconds(2));
    std::array<char, 16 * 1024> sink{};
    std::size_t discarded = 0;
    while (discarded < 4U * 1024U * 1024U) {
        auto [rec, n] = co_await stream.async_read_some(net::buffer(sink), as_tuple(use_awaitable));
        if (rec) {
            break;
        }
        discarded += n;
    }
}

template <class Stream>
net::awaitable<bool> write_response(Stream& stream, Response res) {
    res.prepare_payload();
    auto [ec, n] = co_await http::async_write(stream, res, net::as_tuple(net::use_awaitable));
    co_return !ec;
}

} // namespace session_detail

template <class Stream>
net::awaitable<void>
serve_http(std::shared_ptr<Server::Impl> s, Stream stream, Connections::Ticket ticket) {
    using namespace session_detail;
    using net::as_tuple;
    using net::use_awaitable;
    // The stop hook cancels a read that waits for the next request; a request being answered
    // finishes (with Connection: close) and a stream gets its own hook (on_seat_strand).
    // `phase` lives as long as the session; the hook holds it weakly and runs on this strand.
    auto phase = std::make_shared<Phase>(Phase::reading);
    ticket.on_stop([ex = stream.get_executor(), weak = std::weak_ptr<Phase>(phase), &stream] {
        net::post(ex, [weak, &stream] {
            if (auto p = weak.lock(); p && *p == Phase::reading) {
                StreamOps<Stream>::cancel(stream);
            }
        });
    });
    const std::string peer = PeerOf<Stream>::address(stream);
    beast::flat_buffer buffer;
    bool first = true;
    for (;;) {
        if (s->connections->closing()) {
            co_return;
        }
        *phase = Phase::reading;
        http::request_parser<http::string_body> parser;
        parser.header_limit(16 * 1024);
        parser.body_limit(s->cfg.max_body_bytes);
        if (!first && buffer.size() == 0) {
            // Keep-alive: wait for the next request's first bytes up to the idle limit; from
            // then on the header timeout holds, as for the first request.
            StreamOps<Stream>::expires_after(stream, s->cfg.idle_timeout);
            auto [iec, in] =
                co_await stream.async_read_some(buffer.prepare(4 * 1024), as_tuple(use_awaitable));
            buffer.commit(in);
            if (iec) {
                co_return;
            }
        }
        StreamOps<Stream>::expires_after(stream, s->cfg.header_timeout);
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, as_tuple(use_awaitable));
        *phase = Phase::busy;
        if (ec == http::error::body_limit || ec == http::error::header_limit) {
            Request dummy;
            dummy.version(11);
            auto res = error_response(
                dummy,
                make_error_code(errc::payload_too_large),
                ec == http::error::body_limit
                    ? "request body over the limit (" + std::to_string(s->cfg.max_body_bytes)
                          + " bytes)"
                    : std::string("request header over the limit (16384 bytes)"));
            res.keep_alive(false);
            if (co_await write_response(stream, std::move(res))) {
                co_await lingering_close(stream);
            }
            co_return;
        }
        if (ec) {
            // A malformed request (not a closed, reset or timed-out connection) gets a 400.
            const bool malformed =
                ec.category() == http::make_error_code(http::error::bad_method).category()
                && ec != http::error::end_of_stream && ec != http::error::partial_message;
            if (malformed) {
                Request dummy;
                dummy.version(11);
                auto res = error_response(
                    dummy,
                    make_error_code(errc::bad_request),
                    "malformed HTTP request: " + ec.message());
                res.keep_alive(false);
                if (co_await write_response(stream, std::move(res))) {
                    co_await lingering_close(stream);
                }
            }
            co_return;
        }
        first = false;
        s->requests.fetch_add(1, std::memory_order_relaxed);
        Request req = parser.release();
        auto url = boost::urls::parse_origin_form(req.target());
        if (!url) {
            auto res =
                error_response(req, make_error_code(errc::bad_request), "malformed request target");
            if (!co_await write_response(stream, std::move(res))) {
                co_return;
            }
            continue;
        }
        // Host, Origin, token, JSON and role, before anything is routed (guard.cpp).
        Access granted;
        if (auto refused = check_access(*s, req, *url, peer, granted)) {
            const bool keep = refused->keep_alive(); // a refusal honours Connection: close too
            if (!co_await write_response(stream, std::move(*refused)) || !keep) {
                co_return;
            }
            continue;
        }
        if (auto route = stream_route(*url); route && req.method() == http::verb::get) {
            auto seat = s->hub.find(route->first);
            if (!seat) {
                auto res = error_response(
                    req, make_error_code(errc::not_found), "no such seat: " + route->first);
                if (!co_await write_response(stream, std::move(res))) {
                    co_return;
                }
                continue;
            }
            if (s->connections->closing()) {
                auto res = error_response(
                    req, make_error_code(errc::overloaded), "the server is shutting down");
                res.keep_alive(false);
                (void)co_await write_response(stream, std::move(res));
                co_return;
            }
            *phase = Phase::streaming; // from here on the stream's own hook stops it
            StreamOps<Stream>::expires_never(stream);
            if (route->second == "ws") {
                const bool read_only = granted.grant.role == auth::Role::viewer;
                // Bytes read past the upgrade request belong to the WebSocket stream.
                std::string leftover = beast::buffers_to_string(buffer.data());
                buffer.clear();
                buffer.shrink_to_fit();
                WsUpgrade up{std::move(req), std::move(leftover), read_only};
                auto body = stream_detail::ws_on_strand(*s, seat, stream, std::move(up), ticket);
                co_await stream_detail::on_seat_strand(
                    std::move(seat), "WebSocket", std::move(body));
                co_return;
            }
            std::optional<std::string> last;
            if (auto h = req["Last-Event-ID"]; !h.empty()) {
                last = std::string(h);
            } else if (auto q = query_param(*url, "last_event_id")) {
                last = std::move(*q);
            }
            const auto cod = query_param(*url, "cancel_on_disconnect");
            const bool cancel_on_disconnect = cod && (*cod == "1" || *cod == "true");
            // A subscriber costs its socket and its preview lane: give back the read buffer
            // and the request before the long-lived stream starts (measured by
            // bench/hub_idle_rss.py).
            buffer.clear();
            buffer.shrink_to_fit();
            req = {};
            // The stream and the ticket go to the subscription's own handler chain, and this
            // session ends: its frame is not kept for the life of the stream.
            SubscribeOptions opt{std::move(last), cancel_on_disconnect};
            stream_detail::start_sse(
                std::move(s),
                std::move(seat),
                std::move(stream),
                std::move(opt),
                std::move(ticket));
            co_return;
        }
        Response res = co_await handle_api(*s, req, *url);
        if (s->connections->closing()) {
            res.keep_alive(false); // shutting down: answer this one, then go
        }
        const bool keep = res.keep_alive();
        if (!co_await write_response(stream, std::move(res)) || !keep) {
            co_return;
        }
    }
}

} // namespace sluice::server
