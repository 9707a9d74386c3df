// The listener and shutdown: accept onto a strand per connection, through the connection gate.
#include "impl.hpp"

#include <sluice/server/errors.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace sluice::server {

namespace {

using net::as_tuple;
using net::use_awaitable;

constexpr std::string_view BUSY =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    "Connection: close\r\nContent-Length: 75\r\n\r\n"
    R"({"error":{"code":"overloaded","message":"too many connections, try later"}})";

constexpr std::string_view HEALTHY_BUT_FULL =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    "Connection: close\r\nContent-Length: 29\r\n\r\n"
    R"({"ok":true,"overloaded":true})";

/// How long a refused connection may take to send its request line (to tell /healthz).
constexpr std::chrono::milliseconds REFUSAL_READ_TIMEOUT{500};

/// Most backlog connections answered in one pause while out of descriptors.
constexpr std::size_t BACKLOG_ANSWERS = 256;

/// The accept loop's pause after running out of descriptors (EMFILE/ENFILE): no spin, at most
/// ten tries a second.
constexpr std::chrono::milliseconds ACCEPT_BACKOFF{100};

bool asks_health(std::string_view head) {
    return head.starts_with("GET /healthz ") || head.starts_with("GET /healthz?");
}

// Answers a refused connection at once, without waiting: /healthz (when its request is already
// here) gets 200, anything else 503; then closes it.
void refuse_busy(tcp::socket& socket) {
    boost::system::error_code wec;
    socket.non_blocking(true, wec);
    std::array<char, 64> head{};
    const auto n = socket.read_some(net::buffer(head), wec);
    const bool health = !wec && asks_health(std::string_view(head.data(), n));
    socket.write_some(net::buffer(health ? HEALTHY_BUT_FULL : BUSY), wec);
    socket.close(wec);
}

// Answers a connection the server cannot take: /healthz gets 200 (the hub is alive, only
// full), anything else 503. Reads the request line for at most REFUSAL_READ_TIMEOUT.
net::awaitable<void> refuse(std::shared_ptr<Server::Impl> s, tcp::socket socket) {
    using net::experimental::awaitable_operators::operator||;
    // A timer, not a stream deadline: a deadline would close the socket before the answer.
    net::steady_timer timer(socket.get_executor());
    timer.expires_after(REFUSAL_READ_TIMEOUT);
    std::array<char, 256> head{};
    auto got = co_await (
        socket.async_read_some(net::buffer(head), as_tuple(use_awaitable))
        || timer.async_wait(as_tuple(use_awaitable)));
    std::size_t n = 0;
    if (got.index() == 0) {
        n = std::get<1>(std::get<0>(got));
    }
    const bool health = asks_health(std::string_view(head.data(), n));
    boost::system::error_code wec;
    socket.non_blocking(true, wec);
    socket.write_some(net::buffer(health ? HEALTHY_BUT_FULL : BUSY), wec); // small: fits at once
    socket.shutdown(tcp::socket::shutdown_both, wec);
    socket.close(wec);
    s->listener.leave_refusal();
}

void refuse_or_answer(const std::shared_ptr<Server::Impl>& s, tcp::socket socket) {
    if (!s->listener.enter_refusal()) {
        refuse_busy(socket);
        return;
    }
    auto ex = socket.get_executor();
    net::co_spawn(ex, refuse(s, std::move(socket)), net::detached);
}

bool out_of_descriptors(const boost::system::error_code& ec) {
    return ec.category() == boost::system::system_category()
           && (ec.value() == EMFILE || ec.value() == ENFILE);
}

// Out of descriptors: give the reserve descriptor to the connection waiting first (so it is
// answered, /healthz with 200, and the backlog does not keep the acceptor readable forever),
// then pause before accepting again. Logs at most once a second.
net::awaitable<void> back_off(std::shared_ptr<Server::Impl> s) {
    const auto pauses = s->counters.count_accept_backoff();
    auto& listener = s->listener;
    if (listener.fd_log_due(std::chrono::steady_clock::now())) {
        spdlog::warn(
            "accept: out of file descriptors (pausing {} ms; {} pause(s) so far)",
            ACCEPT_BACKOFF.count(),
            pauses);
    }
    listener.hold_reserve(); // taken back once free
    if (listener.drop_reserve()) {
        // With the reserve given back, answer what waits in the backlog (503, /healthz 200),
        // one descriptor at a time, so no client waits behind a full table for long.
        boost::system::error_code aec;
        auto& acceptor = listener.acceptor();
        acceptor.non_blocking(true, aec);
        for (std::size_t i = 0; i < BACKLOG_ANSWERS && !aec; ++i) {
            tcp::socket socket(s->io);
            acceptor.accept(socket, aec); // non-blocking: a waiting connection, or none
            if (!aec) {
                s->counters.count_rejected();
                refuse_busy(socket); // frees the descriptor at once
            }
        }
        listener.hold_reserve();
    }
    net::steady_timer pause(listener.acceptor().get_executor());
    pause.expires_after(ACCEPT_BACKOFF);
    (void)co_await pause.async_wait(as_tuple(use_awaitable));
}

net::awaitable<void> accept_loop(std::shared_ptr<Server::Impl> s) {
    for (;;) {
        tcp::socket socket(net::make_strand(s->io));
        auto [ec] = co_await s->listener.acceptor().async_accept(socket, as_tuple(use_awaitable));
        if (s->listener.stopping() || ec == net::error::operation_aborted) {
            co_return;
        }
        if (ec) {
            if (out_of_descriptors(ec)) {
                co_await back_off(s);
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
            s->counters.count_rejected();
            refuse_or_answer(s, std::move(socket));
            continue;
        }
        auto ex = socket.get_executor();
        auto session = s->listener.tls() != nullptr
                           ? serve_tls(s, beast::tcp_stream(std::move(socket)), std::move(ticket))
                           : serve_http<beast::tcp_stream>(
                               s, beast::tcp_stream(std::move(socket)), std::move(ticket));
        net::co_spawn(ex, std::move(session), [](const std::exception_ptr& e) {
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

Listener::Listener(net::io_context& io)
    : acceptor_(net::make_strand(io)) {
}

Listener::~Listener() {
    drop_reserve();
}

bool Listener::enter_refusal() noexcept {
    if (refusing_.fetch_add(1) >= REFUSALS_IN_FLIGHT) {
        refusing_.fetch_sub(1);
        return false;
    }
    return true;
}

void Listener::hold_reserve() noexcept {
    if (reserve_fd_ < 0) {
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
}

bool Listener::drop_reserve() noexcept {
    if (reserve_fd_ < 0) {
        return false;
    }
    ::close(reserve_fd_);
    reserve_fd_ = -1;
    return true;
}

bool Listener::fd_log_due(std::chrono::steady_clock::time_point now) noexcept {
    if (now - last_fd_log_ < std::chrono::seconds(1)) {
        return false;
    }
    last_fd_log_ = now;
    return true;
}

namespace {

// Adopts `fd`, a listening TCP socket (socket activation), as the acceptor; close-on-exec,
// so agents never inherit it.
boost::system::error_code adopt_listener(tcp::acceptor& acceptor, int fd) {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    int listening = 0;
    socklen_t optlen = sizeof listening;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0
        || ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0) {
        return {errno, boost::system::system_category()};
    }
    if ((sa.ss_family != AF_INET && sa.ss_family != AF_INET6) || listening == 0) {
        return make_error_code(errc::bad_request);
    }
    (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
    boost::system::error_code ec;
    acceptor.assign(sa.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
    return ec;
}

// The address `listen` names ("host:port", the host maybe bracketed), or errc::bad_request.
boost::system::result<tcp::endpoint> listen_endpoint(const std::string& listen) {
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
    return tcp::endpoint(addr, static_cast<std::uint16_t>(port));
}

} // namespace

boost::system::result<void> Server::start() {
    auto& s = *impl_;
    auto& acceptor = s.listener.acceptor();
    boost::system::error_code ec;
    tcp::endpoint ep;
    if (s.cfg.listen_fd >= 0) {
        ec = adopt_listener(acceptor, s.cfg.listen_fd);
        if (!ec) {
            ep = acceptor.local_endpoint(ec);
        }
        if (ec) {
            return ec;
        }
    } else {
        auto parsed = listen_endpoint(s.cfg.listen);
        if (!parsed) {
            return parsed.error();
        }
        ep = *parsed;
    }
    if (!ep.address().is_loopback() && s.cfg.token.empty()) {
        return make_error_code(errc::unauthorized);
    }
    if (!s.cfg.tls_cert.empty() || !s.cfg.tls_key.empty()) {
        auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
        ctx->set_options(
            net::ssl::context::default_workarounds | net::ssl::context::no_sslv2
            | net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1
            | net::ssl::context::no_tlsv1_1);
        ctx->use_certificate_chain_file(s.cfg.tls_cert, ec);
        if (!ec) {
            ctx->use_private_key_file(s.cfg.tls_key, net::ssl::context::pem, ec);
        }
        if (ec) {
            return ec;
        }
        s.listener.set_tls(std::move(ctx));
    }
    if (s.cfg.listen_fd < 0) {
        acceptor.open(ep.protocol(), ec);
        if (!ec) {
            acceptor.set_option(net::socket_base::reuse_address(true), ec);
            acceptor.bind(ep, ec);
        }
        if (!ec) {
            acceptor.listen(net::socket_base::max_listen_connections, ec);
        }
        if (ec) {
            return ec;
        }
    }
    // One descriptor held back for the moment the process runs out (see back_off).
    s.listener.hold_reserve();
    net::co_spawn(acceptor.get_executor(), accept_loop(impl_), [](const std::exception_ptr& e) {
        if (e) {
            spdlog::error("accept loop ended by an exception");
        }
    });
    return {};
}

std::uint16_t Server::port() const noexcept {
    boost::system::error_code ec;
    auto ep = impl_->listener.acceptor().local_endpoint(ec);
    return ec ? 0 : ep.port();
}

std::string Server::host() const {
    boost::system::error_code ec;
    const auto ep = impl_->listener.acceptor().local_endpoint(ec);
    if (ec) {
        return {};
    }
    const auto a = ep.address().to_string();
    return ep.address().is_v6() ? "[" + a + "]" : a;
}

bool Server::tls() const noexcept {
    return impl_->listener.tls() != nullptr;
}

std::size_t Server::connections() const {
    return impl_->connections->open();
}

void Server::stop() {
    if (impl_->listener.stop()) {
        return;
    }
    net::post(impl_->listener.acceptor().get_executor(), [impl = impl_] {
        boost::system::error_code ec;
        impl->listener.acceptor().close(ec);
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
