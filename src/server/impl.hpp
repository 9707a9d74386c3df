// Private pieces of the server shared by its files: the state, the request type, helpers.
#pragma once

#include <sluice/server/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/url/url_view.hpp>

#include <atomic>
#include <optional>
#include <string>

namespace sluice::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

/// Server state shared by every connection.
struct Server::Impl {
    Impl(net::io_context& io_, hub::Hub& hub_, ServerConfig cfg_)
        : io(io_), hub(hub_), cfg(std::move(cfg_)), acceptor(net::make_strand(io_)) {}

    net::io_context& io;
    hub::Hub& hub;
    ServerConfig cfg;
    tcp::acceptor acceptor;
    std::atomic<std::size_t> connections{0};
    std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<bool> stopping{false};
};

/// A JSON response with `status` and `body`.
Response json_response(const Request& req, unsigned status, std::string body);

/// A JSON error response for `ec`.
Response error_response(const Request& req, const boost::system::error_code& ec, std::string_view message);

/// Answers a plain (non-streaming) request.
net::awaitable<Response> handle_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url);

/// Serves an SSE subscription on `stream` until the client or the seat goes.
net::awaitable<void> serve_sse(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    beast::tcp_stream& stream,
    std::optional<std::string> last_event_id,
    bool cancel_on_disconnect);

/// Accepts a WebSocket upgrade and serves the seat's events over it.
net::awaitable<void> serve_websocket(
    Server::Impl& s, std::shared_ptr<hub::Seat> seat, beast::tcp_stream& stream, Request req);

/// The value of query parameter `key`, if present.
std::optional<std::string> query_param(const boost::urls::url_view& url, std::string_view key);

} // namespace sluice::server
