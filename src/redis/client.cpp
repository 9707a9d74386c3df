// Redis client: connect (TCP, TLS or unix socket), handshake, pipelined writes, in-order
// replies, pub/sub messages, reconnect with backoff.
#include <sluice/detail/net.hpp>
#include <sluice/redis/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

namespace sluice::redis {

using boost::system::error_code;

namespace {

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

/// Bytes read from the socket at a time.
constexpr std::size_t READ_CHUNK = 64 * 1024;

bool is_message(const Reply& r) {
    return r.type == Reply::Type::array && r.elements.size() == 3
           && r.elements[0].type == Reply::Type::string && r.elements[0].str == "message";
}

// The TLS client context of a rediss:// URL: verify the peer, the given CAs (or the system's),
// the client certificate when one is given. Throws with the file and OpenSSL's reason.
std::unique_ptr<ssl::context> make_tls_context(const ClientOptions& opt) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    ctx->set_options(
        ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1
        | ssl::context::no_tlsv1_1);
    ctx->set_verify_mode(ssl::verify_peer);
    error_code ec;
    if (opt.tls_ca_file.empty()) {
        ctx->set_default_verify_paths(ec);
    } else {
        ctx->load_verify_file(opt.tls_ca_file, ec);
    }
    if (ec) {
        throw std::runtime_error(
            "cannot load the CA certificates "
            + (opt.tls_ca_file.empty() ? std::string("(the system's store)") : opt.tls_ca_file)
            + ": " + ec.message());
    }
    if (opt.tls_cert_file.empty() != opt.tls_key_file.empty()) {
        throw std::runtime_error("a Redis client certificate needs both its file and its key");
    }
    if (!opt.tls_cert_file.empty()) {
        ctx->use_certificate_chain_file(opt.tls_cert_file, ec);
        if (ec) {
            throw std::runtime_error(
                "cannot load the client certificate " + opt.tls_cert_file + ": " + ec.message());
        }
        ctx->use_private_key_file(opt.tls_key_file, ssl::context::pem, ec);
        if (ec) {
            throw std::runtime_error(
                "cannot load the client key " + opt.tls_key_file + ": " + ec.message());
        }
    }
    return ctx;
}

} // namespace

struct Client::Conn {
    explicit Conn(const Strand& s)
        : socket(s) {}

    net::generic::stream_protocol::socket socket;
    std::optional<ssl::stream<net::generic::stream_protocol::socket&>> tls; // rediss://
    ReplyReader reader;
    std::array<char, READ_CHUNK> buf{};

    /// Reads what arrives (through TLS when it is on).
    net::awaitable<std::tuple<error_code, std::size_t>> read_some() {
        if (tls) {
            co_return co_await tls->async_read_some(net::buffer(buf), TUPLE);
        }
        co_return co_await socket.async_read_some(net::buffer(buf), TUPLE);
    }

    /// Writes all of `bytes` (through TLS when it is on).
    net::awaitable<std::tuple<error_code, std::size_t>> write_all(const std::string& bytes) {
        if (tls) {
            co_return co_await net::async_write(*tls, net::buffer(bytes), TUPLE);
        }
        co_return co_await net::async_write(socket, net::buffer(bytes), TUPLE);
    }
};

std::shared_ptr<Client> Client::create(net::io_context& io, ClientOptions opt) {
    return std::shared_ptr<Client>(new Client(io, std::move(opt)));
}

Client::Client(net::io_context& io, ClientOptions opt)
    : strand_(net::make_strand(io))
    , opt_(std::move(opt))
    , wake_(strand_, std::chrono::steady_clock::time_point::max())
    , sleep_(strand_) {
    if (opt_.url.kind == Url::Kind::tls) {
        tls_ = make_tls_context(opt_);
    }
}

Client::~Client() = default;

std::string Client::last_error() const {
    std::lock_guard lock(error_mu_);
    return last_error_;
}

void Client::set_error(std::string why) {
    std::lock_guard lock(error_mu_);
    last_error_ = std::move(why);
}

void Client::start() {
    net::dispatch(strand_, [self = shared_from_this()] {
        if (self->started_ || self->stopped_) {
            return;
        }
        self->started_ = true;
        net::co_spawn(self->strand_, self->run(), [](const std::exception_ptr& e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    spdlog::error("redis: connection task ended: {}", x.what());
                }
            }
        });
    });
}

void Client::stop() {
    net::dispatch(strand_, [self = shared_from_this()] {
        self->stopped_ = true;
        if (self->conn_) {
            error_code ec;
            self->conn_->socket.close(ec);
        }
        self->wake_.cancel();
        self->sleep_.cancel();
        self->fail_pending(net::error::operation_aborted);
    });
}

void Client::on_connect(std::function<void()> fn) {
    net::dispatch(strand_, [self = shared_from_this(), fn = std::move(fn)]() mutable {
        self->on_connect_ = std::move(fn);
    });
}

void Client::on_disconnect(std::function<void()> fn) {
    net::dispatch(strand_, [self = shared_from_this(), fn = std::move(fn)]() mutable {
        self->on_disconnect_ = std::move(fn);
    });
}

void Client::on_message(MessageFn fn) {
    net::dispatch(strand_, [self = shared_from_this(), fn = std::move(fn)]() mutable {
        self->on_message_ = std::move(fn);
    });
}

net::awaitable<bool> Client::wait_connected(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    net::steady_timer t(co_await net::this_coro::executor);
    while (!connected_ && std::chrono::steady_clock::now() < deadline) {
        t.expires_after(std::chrono::milliseconds(10));
        co_await t.async_wait(TUPLE);
    }
    co_return connected_.load();
}

void Client::complete(Handler h, error_code ec, Reply r) {
    // As an Asio operation completes: through the handler's own executor (inline when the
    // caller already runs there).
    auto ex = net::get_associated_executor(h);
    net::dispatch(
        ex, [h = std::move(h), ec, r = std::move(r)]() mutable { std::move(h)(ec, std::move(r)); });
}

void Client::async_command(std::vector<std::string> args, Handler done) {
    net::dispatch(
        strand_,
        [self = shared_from_this(), args = std::move(args), done = std::move(done)]() mutable {
            self->issue(args, std::move(done));
        });
}

void Client::issue(const std::vector<std::string>& args, Handler done) {
    if (!connected_ || stopped_) {
        complete(std::move(done), net::error::not_connected, {});
        return;
    }
    if (pending_.size() >= opt_.max_pending) {
        complete(std::move(done), net::error::no_buffer_space, {});
        return;
    }
    append_command(out_, args);
    pending_.push_back(std::move(done));
    wake_.cancel(); // the write loop sends it (with whatever else queued meanwhile)
}

net::awaitable<CommandResult> Client::command(std::vector<std::string> args) {
    auto self = shared_from_this();
    auto op = net::async_initiate<decltype(TUPLE), void(error_code, Reply)>(
        [self](auto handler, std::vector<std::string> a) {
            self->async_command(std::move(a), Handler(std::move(handler)));
        },
        TUPLE,
        std::move(args));
    auto r = co_await std::move(op);
    co_return r;
}

net::awaitable<error_code> Client::subscribe(std::string channel) {
    auto self = shared_from_this();
    auto op = net::async_initiate<decltype(TUPLE), void(error_code, Reply)>(
        [self](auto handler, std::string ch) {
            net::dispatch(
                self->strand_,
                [self, h = Handler(std::move(handler)), ch = std::move(ch)]() mutable {
                    self->channels_.insert(ch); // subscribed again at every connect
                    std::vector<std::string> args{"SUBSCRIBE", std::move(ch)};
                    self->issue(args, std::move(h));
                });
        },
        TUPLE,
        std::move(channel));
    auto [ec, reply] = co_await std::move(op);
    if (!ec && reply.is_error()) {
        ec = net::error::invalid_argument;
    }
    co_return ec;
}

void Client::unsubscribe(std::string channel) {
    net::dispatch(strand_, [self = shared_from_this(), channel = std::move(channel)]() mutable {
        if (self->channels_.erase(channel) == 0 || !self->connected_) {
            return;
        }
        std::vector<std::string> args{"UNSUBSCRIBE", std::move(channel)};
        self->issue(args, Handler([](error_code, const Reply&) {}));
    });
}

void Client::fail_pending(error_code ec) {
    auto pending = std::exchange(pending_, {});
    out_.clear();
    for (auto& h : pending) {
        complete(std::move(h), ec, {});
    }
}

net::awaitable<error_code> Client::connect_once(Conn& c) {
    using net::experimental::awaitable_operators::operator||;
    net::generic::stream_protocol::endpoint ep;
    const Url& url = opt_.url;
    if (url.kind == Url::Kind::unix_socket) {
        ep = net::local::stream_protocol::endpoint(url.path);
    } else {
        net::ip::tcp::resolver resolver(strand_);
        auto [rec, results] =
            co_await resolver.async_resolve(url.host, std::to_string(url.port), TUPLE);
        if (rec) {
            co_return rec;
        }
        if (results.empty()) {
            co_return net::error::host_not_found;
        }
        ep = results.begin()->endpoint();
    }
    error_code ec;
    c.socket.open(ep.protocol(), ec);
    if (ec) {
        co_return ec;
    }
    net::steady_timer timer(strand_);
    timer.expires_after(opt_.connect_timeout);
    auto got = co_await (c.socket.async_connect(ep, TUPLE) || timer.async_wait(TUPLE));
    if (got.index() == 1) {
        co_return net::error::timed_out;
    }
    if (auto [cec] = std::get<0>(got); cec) {
        co_return cec;
    }
    if (url.kind != Url::Kind::unix_socket) {
        c.socket.set_option(net::ip::tcp::no_delay(true), ec);
    }
    if (url.kind == Url::Kind::tls) {
        if (auto tec = co_await tls_handshake(c); tec) {
            co_return tec;
        }
    }
    // The handshake: AUTH, SELECT and the channels, answered before any command goes out.
    std::string hello;
    std::size_t expect = 0;
    if (!url.password.empty()) {
        append_command(hello, {"AUTH", url.password});
        ++expect;
    }
    if (url.db != 0) {
        append_command(hello, {"SELECT", std::to_string(url.db)});
        ++expect;
    }
    for (const auto& ch : channels_) {
        append_command(hello, {"SUBSCRIBE", ch});
        ++expect;
    }
    if (expect == 0) {
        co_return error_code{};
    }
    auto [wec, wn] = co_await c.write_all(hello);
    if (wec) {
        co_return wec;
    }
    while (expect > 0) {
        while (auto r = c.reader.next()) {
            if (r->is_error()) {
                spdlog::error("redis {}: handshake refused: {}", url.display(), r->str);
                set_error("refused: " + r->str);
                co_return net::error::access_denied;
            }
            --expect;
        }
        if (expect == 0) {
            break;
        }
        if (c.reader.failed()) {
            co_return net::error::invalid_argument;
        }
        auto [rec, n] = co_await c.read_some();
        if (rec) {
            co_return rec;
        }
        c.reader.feed(std::string_view(c.buf.data(), n));
    }
    co_return error_code{};
}

net::awaitable<error_code> Client::tls_handshake(Conn& c) {
    using net::experimental::awaitable_operators::operator||;
    const std::string& host = opt_.url.host;
    c.tls.emplace(c.socket, *tls_);
    SSL* h = c.tls->native_handle();
    // OpenSSL checks the name itself (X509_VERIFY_PARAM), so a mismatch is reported as one
    // ("hostname mismatch", "IP address mismatch") rather than a bare verify failure.
    X509_VERIFY_PARAM* param = SSL_get0_param(h);
    error_code not_ip;
    (void)net::ip::make_address(host, not_ip);
    if (!not_ip) {
        if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) {
            set_error("TLS: cannot verify against the address " + host);
            co_return net::error::invalid_argument;
        }
    } else {
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        // SNI carries host names only (RFC 6066), never an IP literal.
        if (X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) != 1
            || SSL_set_tlsext_host_name(h, host.c_str()) != 1) {
            set_error("TLS: cannot verify against the name " + host);
            co_return net::error::invalid_argument;
        }
    }
    net::steady_timer timer(strand_);
    timer.expires_after(opt_.connect_timeout);
    auto got = co_await (
        c.tls->async_handshake(ssl::stream_base::client, TUPLE) || timer.async_wait(TUPLE));
    if (got.index() == 1) {
        set_error("TLS handshake timed out");
        co_return net::error::timed_out;
    }
    auto [ec] = std::get<0>(got);
    if (ec) {
        std::string why = "TLS handshake failed: " + ec.message();
        if (const auto v = SSL_get_verify_result(h); v != X509_V_OK) {
            why += ": ";
            why += X509_verify_cert_error_string(v);
            if (!opt_.tls_ca_file.empty()) {
                why += " (CAs from " + opt_.tls_ca_file + ")";
            }
        }
        set_error(std::move(why));
    }
    co_return ec;
}

net::awaitable<void> Client::read_loop(Conn& c) {
    for (;;) {
        auto [ec, n] = co_await c.read_some();
        if (ec) {
            co_return;
        }
        if (!c.reader.feed(std::string_view(c.buf.data(), n))) {
            spdlog::error("redis {}: not RESP, closing", opt_.url.display());
            co_return;
        }
        while (auto r = c.reader.next()) {
            if (is_message(*r)) {
                if (on_message_) {
                    on_message_(r->elements[1].str, r->elements[2].str);
                }
                continue;
            }
            if (pending_.empty()) {
                continue; // an unsolicited reply (none expected in RESP2): ignored
            }
            auto h = std::move(pending_.front());
            pending_.pop_front();
            complete(std::move(h), {}, std::move(*r));
        }
        if (c.reader.failed()) {
            spdlog::error("redis {}: not RESP, closing", opt_.url.display());
            co_return;
        }
    }
}

net::awaitable<void> Client::write_loop(Conn& c) {
    std::string sending;
    for (;;) {
        if (out_.empty()) {
            wake_.expires_at(std::chrono::steady_clock::time_point::max());
            auto [ec] = co_await wake_.async_wait(TUPLE);
            if (stopped_ || !c.socket.is_open()) {
                co_return;
            }
            if (out_.empty()) {
                if (ec != net::error::operation_aborted) {
                    co_return;
                }
                // woken with nothing to write: a cancelled loop (||) or a spurious wake
                auto cs = co_await net::this_coro::cancellation_state;
                if (cs.cancelled() != net::cancellation_type::none) {
                    co_return;
                }
                continue;
            }
        }
        sending.clear();
        std::swap(sending, out_);
        auto [ec, n] = co_await c.write_all(sending);
        if (ec) {
            co_return;
        }
    }
}

net::awaitable<void> Client::run() {
    using net::experimental::awaitable_operators::operator||;
    auto self = shared_from_this(); // alive until stopped
    auto backoff = opt_.backoff_min;
    bool said = false;
    while (!stopped_) {
        auto c = std::make_shared<Conn>(strand_);
        conn_ = c;
        set_error({});
        const auto ec = co_await connect_once(*c);
        if (ec && last_error().empty()) {
            set_error(ec.message());
        }
        if (!ec && !stopped_) {
            connected_ = true;
            ++connects_;
            backoff = opt_.backoff_min;
            if (said) {
                spdlog::info("redis {}: connected again", opt_.url.display());
            }
            said = false;
            if (on_connect_) {
                on_connect_();
            }
            co_await (read_loop(*c) || write_loop(*c));
            connected_ = false;
            if (!stopped_) {
                spdlog::warn("redis {}: connection lost, reconnecting", opt_.url.display());
                said = true;
            }
            if (on_disconnect_) {
                on_disconnect_();
            }
        } else if (ec && !said && !stopped_) {
            spdlog::warn("redis {}: cannot connect: {}", opt_.url.display(), last_error());
            said = true;
        }
        error_code cec;
        c->socket.close(cec);
        conn_.reset();
        fail_pending(ec ? ec : net::error::connection_reset);
        if (stopped_) {
            break;
        }
        sleep_.expires_after(backoff);
        co_await sleep_.async_wait(TUPLE);
        backoff = std::min(backoff * 2, opt_.backoff_max);
    }
}

} // namespace sluice::redis
