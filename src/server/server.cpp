// The listener and shutdown: accept onto a strand per connection, through the connection gate.
#include "impl.hpp"

#include <sluice/server/errors.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

namespace sluice::server {

namespace {

using net::as_tuple;
using net::use_awaitable;

void refuse_busy(tcp::socket& socket) {
    static constexpr std::string_view BUSY =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: 75\r\n\r\n"
        R"({"error":{"code":"overloaded","message":"too many connections, try later"}})";
    boost::system::error_code wec;
    socket.non_blocking(true, wec);
    socket.write_some(net::buffer(BUSY), wec);
    socket.close(wec);
}

net::awaitable<void> accept_loop(std::shared_ptr<Server::Impl> s) {
    for (;;) {
        tcp::socket socket(net::make_strand(s->io));
        auto [ec] = co_await s->acceptor.async_accept(socket, as_tuple(use_awaitable));
        if (s->stopping || ec == net::error::operation_aborted) {
            co_return;
        }
        if (ec) {
            if (ec == net::error::no_descriptors) {
                spdlog::warn("accept: out of file descriptors");
            }
            continue;
        }
        auto ticket = s->connections->enter();
        if (!ticket && s->connections->closing()) {
            boost::system::error_code cec;
            socket.close(cec); // shutting down: no new work
            continue;
        }
        if (!ticket) {
            s->rejected.fetch_add(1);
            refuse_busy(socket);
            continue;
        }
        auto ex = socket.get_executor();
        net::co_spawn(
            ex,
            serve_http<beast::tcp_stream>(
                s, beast::tcp_stream(std::move(socket)), std::move(ticket)),
            [](const std::exception_ptr& e) {
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

// Ends a shutdown once: when the last connection left or the grace deadline passed.
struct ShutdownWait {
    ShutdownWait(net::io_context& io, std::function<void(std::size_t)> fn)
        : strand(net::make_strand(io))
        , timer(strand)
        , done(std::move(fn)) {}

    net::strand<net::io_context::executor_type> strand;
    net::steady_timer timer; // the grace deadline, on `strand`
    std::function<void(std::size_t)> done;
    bool fired{false};

    // On `strand`.
    void fire(std::size_t left) {
        if (fired) {
            return;
        }
        fired = true;
        timer.cancel();
        if (left > 0) {
            spdlog::warn("shutdown: grace deadline passed with {} connection(s) open", left);
        }
        if (done) {
            net::post(strand.get_inner_executor(), [d = std::move(done), left] { d(left); });
        }
    }
};

} // namespace

Server::Server(net::io_context& io, hub::Hub& hub, ServerConfig config)
    : impl_(std::make_shared<Impl>(io, hub, std::move(config))) {
}

Server::~Server() {
    // stop() posts the acceptor's close, which allocates; a destructor must not throw.
    try {
        stop();
    } catch (const std::exception& e) {
        spdlog::error("server: stopping the listener failed: {}", e.what());
    } catch (...) {
        spdlog::error("server: stopping the listener failed");
    }
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

std::size_t Server::connections() const {
    return impl_->connections->open();
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

void Server::shutdown(std::chrono::milliseconds grace, std::function<void(std::size_t open)> done) {
    stop();
    auto wait = std::make_shared<ShutdownWait>(impl_->io, std::move(done));
    wait->timer.expires_after(grace);
    wait->timer.async_wait([wait, conns = impl_->connections](boost::system::error_code ec) {
        if (!ec) {
            wait->fire(conns->open());
        }
    });
    impl_->connections->close([wait] { net::post(wait->strand, [wait] { wait->fire(0); }); });
}

} // namespace sluice::server
