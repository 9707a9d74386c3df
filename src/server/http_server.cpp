// The listener and the HTTP session: read with limits and timeouts, authorize, route.
#include "impl.hpp"

#include <sluice/server/errors.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <array>

namespace sluice::server {

namespace {

using net::as_tuple;
using net::use_awaitable;

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = static_cast<unsigned char>(diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
    }
    return diff == 0;
}

bool authorized(const Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    if (s.cfg.token.empty()) {
        return true;
    }
    const auto auth = req[http::field::authorization];
    constexpr std::string_view bearer = "Bearer ";
    if (auth.size() > bearer.size() && auth.substr(0, bearer.size()) == bearer
        && constant_time_equal(auth.substr(bearer.size()), s.cfg.token)) {
        return true;
    }
    if (auto q = query_param(url, "access_token")) {
        return constant_time_equal(*q, s.cfg.token);
    }
    return false;
}

// Which seat a streaming route names, if the target is /v1/seats/{id}/{events|ws}.
std::optional<std::pair<std::string, std::string>> stream_route(const boost::urls::url_view& url) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (parts.size() == 4 && parts[0] == "v1" && parts[1] == "seats"
        && (parts[3] == "events" || parts[3] == "ws")) {
        return std::pair{parts[2], parts[3]};
    }
    return std::nullopt;
}

// Closes after an early error answer without resetting the peer: stop sending, then read and
// discard what the client is still sending (bounded in bytes and time), so it can read our
// answer before the connection goes (a reset would destroy the unread response).
net::awaitable<void> lingering_close(beast::tcp_stream& stream) {
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(std::chrono::seconds(2));
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

net::awaitable<void> write_response(beast::tcp_stream& stream, Response res) {
    res.prepare_payload();
    co_await http::async_write(stream, res, as_tuple(use_awaitable));
}

net::awaitable<void> session(std::shared_ptr<Server::Impl> s, tcp::socket socket) {
    struct Count {
        std::atomic<std::size_t>& n;
        ~Count() { n.fetch_sub(1); }
    } count{s->connections};
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    bool first = true;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.header_limit(16 * 1024);
        parser.body_limit(s->cfg.max_body_bytes);
        stream.expires_after(first ? s->cfg.header_timeout : s->cfg.idle_timeout);
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, as_tuple(use_awaitable));
        if (ec == http::error::body_limit || ec == http::error::header_limit) {
            Request dummy;
            dummy.version(11);
            auto res = error_response(
                dummy,
                make_error_code(errc::payload_too_large),
                ec == http::error::body_limit ? "request body over the limit" : "request header over the limit");
            res.keep_alive(false);
            co_await write_response(stream, std::move(res));
            co_await lingering_close(stream);
            co_return;
        }
        if (ec) {
            // A malformed request (not a closed, reset or timed-out connection) gets a 400.
            const bool malformed = ec.category() == http::make_error_code(http::error::bad_method).category()
                                   && ec != http::error::end_of_stream && ec != http::error::partial_message;
            if (malformed) {
                Request dummy;
                dummy.version(11);
                auto res = error_response(dummy, make_error_code(errc::bad_request), "malformed HTTP request");
                res.keep_alive(false);
                co_await write_response(stream, std::move(res));
                co_await lingering_close(stream);
            }
            co_return;
        }
        first = false;
        s->requests.fetch_add(1, std::memory_order_relaxed);
        Request req = parser.release();
        auto url = boost::urls::parse_origin_form(req.target());
        if (!url) {
            co_await write_response(stream, error_response(req, make_error_code(errc::bad_request), "malformed request target"));
            continue;
        }
        // The page's own files hold no secret; without them a browser could never show the
        // token form. Everything else needs the token.
        const bool page_file = (req.method() == http::verb::get || req.method() == http::verb::head)
                               && web::find_asset(url->path()) != nullptr;
        if (!page_file && !authorized(*s, req, *url)) {
            auto res = error_response(req, make_error_code(errc::unauthorized), "a bearer token is required");
            res.set(http::field::www_authenticate, "Bearer");
            co_await write_response(stream, std::move(res));
            continue;
        }
        if (auto route = stream_route(*url); route && req.method() == http::verb::get) {
            auto seat = s->hub.find(route->first);
            if (!seat) {
                co_await write_response(stream, error_response(req, make_error_code(errc::not_found), "no such seat"));
                continue;
            }
            stream.expires_never();
            if (route->second == "ws") {
                co_await serve_websocket(*s, std::move(seat), stream, std::move(req));
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
            co_await serve_sse(*s, std::move(seat), stream, std::move(last), cancel_on_disconnect);
            co_return;
        }
        Response res = co_await handle_api(*s, req, *url);
        const bool keep = res.keep_alive();
        co_await write_response(stream, std::move(res));
        if (!keep) {
            co_return;
        }
    }
}

net::awaitable<void> accept_loop(std::shared_ptr<Server::Impl> s) {
    for (;;) {
        tcp::socket socket(net::make_strand(s->io));
        auto [ec] = co_await s->acceptor.async_accept(socket, as_tuple(use_awaitable));
        if (ec) {
            if (ec == net::error::operation_aborted || s->stopping) {
                co_return;
            }
            if (ec == net::error::no_descriptors) {
                spdlog::warn("accept: out of file descriptors");
            }
            continue;
        }
        if (s->connections.load() >= s->cfg.max_connections) {
            s->rejected.fetch_add(1);
            static constexpr std::string_view busy =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                "Connection: close\r\nContent-Length: 75\r\n\r\n"
                R"({"error":{"code":"overloaded","message":"too many connections, try later"}})";
            boost::system::error_code wec;
            socket.non_blocking(true, wec);
            socket.write_some(net::buffer(busy), wec);
            socket.close(wec);
            continue;
        }
        s->connections.fetch_add(1);
        auto ex = socket.get_executor();
        net::co_spawn(ex, session(s, std::move(socket)), [](const std::exception_ptr& e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    spdlog::error("session ended by an exception: {}", x.what());
                }
            }
        });
    }
}

} // namespace

Server::Server(net::io_context& io, hub::Hub& hub, ServerConfig config)
    : impl_(std::make_shared<Impl>(io, hub, std::move(config))) {}

Server::~Server() {
    stop();
}

boost::system::result<void> Server::start() {
    auto& s = *impl_;
    const auto& listen = s.cfg.listen;
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) {
        return make_error_code(errc::bad_request);
    }
    std::string host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    boost::system::error_code ec;
    const auto addr = net::ip::make_address(host.empty() ? "127.0.0.1" : host, ec);
    if (ec) {
        return make_error_code(errc::bad_request);
    }
    unsigned long port = 0;
    try {
        port = std::stoul(listen.substr(colon + 1));
    } catch (const std::exception&) {
        return make_error_code(errc::bad_request);
    }
    if (port > 65535) {
        return make_error_code(errc::bad_request);
    }
    if (!addr.is_loopback() && s.cfg.token.empty()) {
        return make_error_code(errc::unauthorized);
    }
    tcp::endpoint ep(addr, static_cast<std::uint16_t>(port));
    s.acceptor.open(ep.protocol(), ec);
    if (!ec) {
        s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
        s.acceptor.bind(ep, ec);
    }
    if (!ec) {
        s.acceptor.listen(net::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return ec;
    }
    net::co_spawn(s.acceptor.get_executor(), accept_loop(impl_), [](const std::exception_ptr& e) {
        if (e) {
            spdlog::error("accept loop ended by an exception");
        }
    });
    return {};
}

std::uint16_t Server::port() const noexcept {
    boost::system::error_code ec;
    auto ep = impl_->acceptor.local_endpoint(ec);
    return ec ? 0 : ep.port();
}

void Server::stop() {
    if (impl_->stopping.exchange(true)) {
        return;
    }
    net::post(impl_->acceptor.get_executor(), [impl = impl_] {
        boost::system::error_code ec;
        impl->acceptor.close(ec);
    });
}

} // namespace sluice::server
