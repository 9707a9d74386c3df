// The HTTP session, generic over the stream (tcp_stream in the server, test::stream in the
// failure-matrix tests): read with limits and timeouts, authorize, route, stop at shutdown.
// Included only by the .cpp files that instantiate it.
#pragma once

#include "impl.hpp"
#include "sse_stream.hpp"
#include "ws_stream.hpp"

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

// Largest request header read (431-style refusals answer 413 with this figure).
inline constexpr std::size_t HEADER_LIMIT = 16 * 1024;

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

// An answer sent instead of routing, and whether the session ends after it.
struct EarlyAnswer {
    Response res;
    bool last{false}; ///< the session ends once it is written
};

// The stop hook of a session: cancels a read that waits for the next request; a request being
// answered finishes (with Connection: close) and a stream gets its own hook (Subscription).
// `phase` lives as long as the session; the hook holds it weakly and runs on the stream's
// strand.
template <class Stream>
void stop_reading_at_shutdown(
    Connections::Ticket& ticket, Stream& stream, const std::shared_ptr<Phase>& phase) {
    ticket.on_stop([ex = stream.get_executor(), weak = std::weak_ptr<Phase>(phase), &stream] {
        net::post(ex, [weak, &stream] {
            if (auto p = weak.lock(); p && *p == Phase::reading) {
                StreamOps<Stream>::cancel(stream);
            }
        });
    });
}

// The answer to a read that failed: 413 for a header or body over its limit, 400 for a
// malformed request (not a closed, reset or timed-out connection: those get nothing).
std::optional<Response> read_error_answer(const Server::Impl& s, boost::system::error_code ec);

// Reads the next request: on a kept-alive connection its first bytes within the idle limit,
// then the whole of it within the header timeout, with the header and body limits. A request
// that fails is answered (read_error_answer) and the connection closed lingering; then there is
// no request and the session ends.
template <class Stream>
net::awaitable<std::optional<Request>>
read_request(const Server::Impl& s, Stream& stream, beast::flat_buffer& buffer, bool first) {
    using net::as_tuple;
    using net::use_awaitable;
    http::request_parser<http::string_body> parser;
    parser.header_limit(HEADER_LIMIT);
    parser.body_limit(s.cfg.max_body_bytes);
    if (!first && buffer.size() == 0) {
        // Keep-alive: wait for the next request's first bytes up to the idle limit; from then
        // on the header timeout holds, as for the first request.
        StreamOps<Stream>::expires_after(stream, s.cfg.idle_timeout);
        auto [iec, in] =
            co_await stream.async_read_some(buffer.prepare(4 * 1024), as_tuple(use_awaitable));
        buffer.commit(in);
        if (iec) {
            co_return std::nullopt;
        }
    }
    StreamOps<Stream>::expires_after(stream, s.cfg.header_timeout);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, as_tuple(use_awaitable));
    if (!ec) {
        co_return parser.release();
    }
    if (auto res = read_error_answer(s, ec)) {
        if (co_await write_response(stream, std::move(*res))) {
            co_await lingering_close(stream);
        }
    }
    co_return std::nullopt;
}

// What comes before routing: the target parsed (400) and the access checks (Host, Origin,
// token, JSON, role: guard.cpp). @return the answer to send instead of routing, or nothing
// (then `url` is the parsed target and `granted` says who asks).
std::optional<EarlyAnswer> screen_request(
    Server::Impl& s,
    const Request& req,
    std::string_view peer,
    boost::urls::url_view& url,
    Access& granted);

// What refuses a stream before it starts: no such seat (404), or shutdown (503, and the
// connection ends).
std::optional<EarlyAnswer> refuse_stream(
    const Server::Impl& s, const Request& req, const hub::Seat* seat, const std::string& id);

// Answers a plain request through the API; at shutdown it is the connection's last.
inline net::awaitable<Response> route_request(
    Server::Impl& s, const Request& req, const boost::urls::url_view& url, const Access& who) {
    Response res = co_await handle_api(s, req, url, who);
    if (s.connections->closing()) {
        res.keep_alive(false); // shutting down: answer this one, then go
    }
    co_return res;
}

// The upgrade path: hands the connection to the seat's stream, WebSocket (`ws`) or SSE. The
// session ends with it (a WebSocket: once its reader ends; SSE at once, the stream owning the
// connection from here on).
template <class Stream>
net::awaitable<void> serve_stream(
    std::shared_ptr<Server::Impl> s,
    std::shared_ptr<hub::Seat> seat,
    bool ws,
    Stream& stream,
    beast::flat_buffer& buffer,
    Request& req,
    const boost::urls::url_view& url,
    const Access& granted,
    Connections::Ticket& ticket) {
    StreamOps<Stream>::expires_never(stream);
    SubscribeOptions opt{stream_detail::last_event_id(req, url), false};
    if (ws) {
        const bool read_only = granted.grant.role == auth::Role::viewer;
        // Bytes read past the upgrade request belong to the WebSocket stream.
        std::string leftover = beast::buffers_to_string(buffer.data());
        buffer.clear();
        buffer.shrink_to_fit();
        WsUpgrade up{std::move(req), std::move(leftover), read_only, std::move(opt)};
        auto body = stream_detail::ws_on_strand(s, seat, stream, std::move(up), ticket);
        co_await stream_detail::on_seat_strand(std::move(seat), "WebSocket", std::move(body));
        co_return;
    }
    const auto cod = query_param(url, "cancel_on_disconnect");
    opt.cancel_on_disconnect = cod && (*cod == "1" || *cod == "true");
    // A subscriber costs its socket and its preview lane: give back the read buffer and the
    // request before the long-lived stream starts (measured by bench/hub_idle_rss.py).
    buffer.clear();
    buffer.shrink_to_fit();
    req = {};
    // The stream and the ticket go to the subscription's own handler chain, and this session
    // ends: its frame is not kept for the life of the stream.
    stream_detail::start_sse(
        std::move(s), std::move(seat), std::move(stream), std::move(opt), std::move(ticket));
}

} // namespace session_detail

template <class Stream>
net::awaitable<void>
serve_http(std::shared_ptr<Server::Impl> s, Stream stream, Connections::Ticket ticket) {
    using namespace session_detail;
    auto phase = std::make_shared<Phase>(Phase::reading);
    stop_reading_at_shutdown(ticket, stream, phase);
    const std::string peer = PeerOf<Stream>::address(stream);
    beast::flat_buffer buffer;
    for (bool first = true;; first = false) {
        if (s->connections->closing()) {
            co_return;
        }
        *phase = Phase::reading;
        auto req = co_await read_request(*s, stream, buffer, first);
        *phase = Phase::busy;
        if (!req) {
            co_return;
        }
        s->counters.count_request();
        boost::urls::url_view url;
        Access granted;
        if (auto early = screen_request(*s, *req, peer, url, granted)) {
            if (!co_await write_response(stream, std::move(early->res)) || early->last) {
                co_return;
            }
            continue;
        }
        if (auto route = stream_route(url); route && req->method() == http::verb::get) {
            auto seat = s->hub.find(route->first);
            if (auto early = refuse_stream(*s, *req, seat.get(), route->first)) {
                if (!co_await write_response(stream, std::move(early->res)) || early->last) {
                    co_return;
                }
                continue;
            }
            *phase = Phase::streaming; // from here on the stream's own hook stops it
            co_await serve_stream(
                std::move(s),
                std::move(seat),
                route->second == "ws",
                stream,
                buffer,
                *req,
                url,
                granted,
                ticket);
            co_return;
        }
        Response res = co_await route_request(*s, *req, url, granted);
        const bool keep = res.keep_alive();
        if (!co_await write_response(stream, std::move(res)) || !keep) {
            co_return;
        }
    }
}

} // namespace sluice::server
