// Private pieces of the server shared by its files: the state, the request type, helpers.
#pragma once

#include "connections.hpp"
#include "counters.hpp"
#include "flush_groups.hpp"
#include "guard.hpp"
#include "listener.hpp"
#include "message.hpp"
#include "shared_body.hpp"

#include <sluice/hub/wire.hpp>
#include <sluice/server/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/url/url_view.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::server {

/// Server state shared by every connection, made of parts each route takes as it needs: the
/// configuration (fixed), the hub, the connection gate, the listener, the access guard and
/// the counters.
///
/// @par Thread safety
/// Each part states its own; `cfg` is immutable after construction.
struct Server::Impl {
    Impl(net::io_context& io_, hub::Hub& hub_, ServerConfig cfg_)
        : io(io_)
        , hub(hub_)
        , cfg(std::move(cfg_))
        , connections(std::make_shared<Connections>(cfg.max_connections))
        , listener(io_)
        , guard(cfg) {}

    net::io_context& io;
    hub::Hub& hub;                            ///< the seats
    const ServerConfig cfg;                   ///< limits and settings
    std::shared_ptr<Connections> connections; ///< the gate: counted, stoppable, drainable
    Listener listener;                        ///< the acceptor, TLS, refusals, reserve fd
    Guard guard;                              ///< tokens, backoff, Host and Origin lists
    Counters counters;                        ///< the server's figures for /v1/stats
    FlushGroups flush_groups;                 ///< each seat's writes, spread over the threads
};

/// What a stream type must offer the sessions beyond AsyncReadStream/AsyncWriteStream: the
/// deadline and the ways to end. Specialized for `beast::tcp_stream` here and for
/// `beast::test::stream` in the failure-matrix tests.
template <class Stream>
struct StreamOps;

template <>
struct StreamOps<beast::tcp_stream> {
    static void expires_after(beast::tcp_stream& s, std::chrono::milliseconds d) {
        s.expires_after(d);
    }

    static void expires_never(beast::tcp_stream& s) { s.expires_never(); }

    /// Stops sending (the peer reads the end of the stream) and keeps reading.
    static void shutdown_send(beast::tcp_stream& s) {
        boost::system::error_code ec;
        s.socket().shutdown(tcp::socket::shutdown_send, ec);
    }

    /// Ends the connection both ways.
    static void shutdown(beast::tcp_stream& s) {
        boost::system::error_code ec;
        s.socket().shutdown(tcp::socket::shutdown_both, ec);
    }

    /// Cancels pending operations (a read waiting for the next request ends).
    static void cancel(beast::tcp_stream& s) { s.cancel(); }
};

/// A JSON response with `status` and `body`.
Response json_response(const Request& req, unsigned status, std::string body);

/// A JSON error response for `ec`.
Response
error_response(const Request& req, const boost::system::error_code& ec, std::string_view message);

/// Answers a plain (non-streaming) request. Never throws: a handler's exception becomes a 500
/// with its message, and one log line.
/// `who`: what the access checks granted (a forwarded command: the owner).
net::awaitable<Response> handle_api(
    Server::Impl& s, const Request& req, const boost::urls::url_view& url, const Access& who = {});

/// Serves one HTTP connection until the peer goes, an error, or shutdown; leaves `ticket` at
/// the end. Runs on `stream`'s executor (the connection's strand).
template <class Stream>
net::awaitable<void>
serve_http(std::shared_ptr<Server::Impl> s, Stream stream, Connections::Ticket ticket);

/// Serves one HTTPS connection: the TLS handshake (bounded by the header timeout), then
/// serve_http over the TLS stream (tls_session.cpp).
net::awaitable<void>
serve_tls(std::shared_ptr<Server::Impl> s, beast::tcp_stream plain, Connections::Ticket ticket);

/// What a subscriber's stream asks for: where to resume, and (SSE) whether its going cancels
/// the turn.
struct SubscribeOptions {
    std::optional<std::string> last_event_id; ///< "<epoch>:<seq>", or none
    bool cancel_on_disconnect{false};         ///< SSE `?cancel_on_disconnect=1`
};

/// A WebSocket upgrade as the HTTP session hands it over.
struct WsUpgrade {
    Request req;          ///< the upgrade request
    std::string leftover; ///< bytes the client sent after it (read with it)
    bool read_only{};     ///< a viewer's socket: ops that act are refused
    SubscribeOptions opt; ///< where it resumes (last_event_id)
};

namespace stream_detail {
/// One WebSocket message to send back to a client op: small text, or a head and tail around a
/// shared payload (a history page, gathered into the write, never copied).
struct WsReply {
    hub::wire::Pieces pieces;                ///< head (owned), body (a view of `keep`), tail
    std::shared_ptr<const std::string> keep; ///< what `pieces.body` points into, or null

    /// The whole message as one string (tests; the writer gathers the pieces).
    [[nodiscard]] std::string text() const {
        std::string t = pieces.head;
        t += pieces.body;
        t += pieces.tail;
        return t;
    }
};

/// Takes the answer to one client op; called on the seat's strand.
using WsDone = std::function<void(WsReply)>;

/// Answers one WebSocket client message (an op: send, cancel, more) with the message to send
/// back, handed to `done` on the seat's strand: at once, or — a `more` page below the window —
/// once the seat has read it from the transcript on the hub's writer (Seat::history, the path
/// `GET /history` takes: the disk is never read on an I/O thread). Validated by the shared
/// validator; never throws for a client's mistake. `read_only` (a viewer): send and cancel are
/// refused, with the reason. On a mirror (scale-out) with a `forwarder`, every op validated
/// here goes to the seat's owner node (ws_forward) and its answer is the reply; without one a
/// mirror refuses what acts and pages from its window.
void ws_answer(
    hub::Seat& seat,
    std::string_view message,
    bool read_only,
    const WsDone& done,
    const std::shared_ptr<hub::Forwarder>& forwarder = {});

/// A client op a mirror carries to the seat's owner: which op (for the reply's shape) and the
/// owner's API request it is.
struct WsForwardOp {
    enum class Kind { send, cancel, answer, reset, more };
    Kind kind{Kind::send};
    hub::ForwardedRequest req; ///< e.g. POST /v1/seats/<id>/messages {"text":…}
};

/// The WebSocket reply for the owner's answer to a forwarded op: the reply its own socket
/// sends (`sent`, `cancelled`, `answered`, `reset`, `history`), its refusal as the same
/// `error` (code and message of its error body), or `unavailable` with why (status 0: the
/// owner is gone or did not answer). Pure.
[[nodiscard]] WsReply ws_forwarded_reply(WsForwardOp::Kind kind, unsigned status, std::string body);

/// Sends `op` to `seat`'s owner through `forwarder` and hands the reply (ws_forwarded_reply)
/// to `done` on the seat's strand (the forwarder answers on its own thread). @pre seat.mirror()
void ws_forward(hub::Forwarder& forwarder, hub::Seat& seat, WsForwardOp op, WsDone done);
} // namespace stream_detail

/// The client's address of a stream, for the backoff: "" where there is none (test streams);
/// specialized for the TCP and TLS streams.
template <class Stream>
struct PeerOf {
    static std::string address(Stream& /*stream*/) { return {}; }
};

/// The client's address of a TCP stream.
std::string peer_address(const beast::tcp_stream& stream);

template <>
struct PeerOf<beast::tcp_stream> {
    static std::string address(beast::tcp_stream& s) { return peer_address(s); }
};

/// The value of query parameter `key`, if present.
std::optional<std::string> query_param(const boost::urls::url_view& url, std::string_view key);

} // namespace sluice::server
