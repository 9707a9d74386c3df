// Private pieces of the server shared by its files: the state, the request type, helpers.
#pragma once

#include "connections.hpp"
#include "shared_body.hpp"

#include <sluice/hub/wire.hpp>
#include <sluice/server/access.hpp>
#include <sluice/server/auth.hpp>
#include <sluice/server/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/url/url_view.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

using Request = http::request<http::string_body>;
/// A response: its body is a shared immutable string (a page is never copied per client).
using Response = http::response<SharedBody>;

/// Server state shared by every connection.
struct Server::Impl {
    Impl(net::io_context& io_, hub::Hub& hub_, ServerConfig cfg_)
        : io(io_)
        , hub(hub_)
        , cfg(std::move(cfg_))
        , acceptor(net::make_strand(io_))
        , connections(std::make_shared<Connections>(cfg.max_connections))
        , keyring(cfg.token, cfg.token_dir)
        , backoff(access::BackoffLimits{.free_failures = cfg.auth_free_failures})
        , names(access::site_names(
              access::listen_host(cfg.listen),
              cfg.allow_hosts,
              cfg.allow_origins,
              cfg.public_url)) {}

    ~Impl();
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    net::io_context& io;
    hub::Hub& hub;
    ServerConfig cfg;
    tcp::acceptor acceptor;
    std::shared_ptr<Connections> connections; ///< the gate: counted, stoppable, drainable
    std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> lane_peak_retained{
        0};                                  ///< most preview bytes one lane was seen holding
    std::atomic<std::uint64_t> gap_bytes{0}; ///< preview bytes reported as gap, all streams
    auth::Keyring keyring;                   ///< the tokens accepted
    access::Backoff backoff;                 ///< wrong-token backoff per peer
    access::SiteNames names;                 ///< Host and Origin allow-lists
    std::unique_ptr<net::ssl::context> tls;  ///< set by start with --tls-cert/--tls-key
    std::atomic<std::uint64_t> let_go_write_timeout{0}; ///< subscribers let go: write stalled
    std::atomic<std::uint64_t> let_go_lagged{0};        ///< subscribers let go: behind the front
    std::atomic<std::uint64_t> ws_overloaded{0};        ///< WebSocket ops refused as overloaded
    std::atomic<std::uint64_t> accept_backoffs{0};      ///< accept paused: out of descriptors
    std::atomic<std::size_t> refusing{0};               ///< refused connections being answered
    int reserve_fd{-1}; ///< held back for answering when out of descriptors (acceptor strand)
    std::chrono::steady_clock::time_point last_fd_log{}; ///< acceptor strand: log once a second

    /// Notes what a subscriber's lane holds, before its writer collects (on the seat strand):
    /// a stalled writer collects next when its socket drains, so the level it then sees is what
    /// the lane held all that while.
    void note_lane_level(const hub::Subscriber& sub) noexcept {
        const auto level = sub.preview_retained();
        auto cur = lane_peak_retained.load(std::memory_order_relaxed);
        while (
            level > cur
            && !lane_peak_retained.compare_exchange_weak(cur, level, std::memory_order_relaxed)) {
        }
    }

    /// Counts the gap bytes a collect reported. `gap_seen`: the subscriber's count at the last
    /// note.
    void note_gaps(const hub::Subscriber& sub, std::uint64_t& gap_seen) noexcept {
        gap_bytes.fetch_add(sub.gap_bytes() - gap_seen, std::memory_order_relaxed);
        gap_seen = sub.gap_bytes();
    }
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
net::awaitable<Response>
handle_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url);

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

/// What the access checks decided for a request that may go on.
struct Access {
    auth::Grant grant;     ///< who asks (owner when no token is required)
    bool page_file{false}; ///< a GET of the page's static files (no token needed)
};

/// The access checks of one request, before routing: Host (421), Origin (403), token (401,
/// 429 while a peer is held back), JSON for state changes (415), a viewer's limits (403), and
/// `/v1/whoami`. @return the answer to send instead of routing, or nothing (then `out` says who
/// asks). `peer`: the client's address, for the backoff. Safe from any thread.
std::optional<Response> check_access(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    std::string_view peer,
    Access& out);

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
