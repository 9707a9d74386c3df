// The HTTP/1.1 client: connect (direct, proxy, CONNECT tunnel, TLS), send, stream, retry.
#include <sluice/runtime/http_client.hpp>

#include <sluice/core/error.hpp>

#include "http_client_detail.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>

namespace sluice::runtime {

namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
constexpr auto TUPLE = net::as_tuple(net::use_awaitable);
constexpr std::size_t READ_CHUNK = 16U << 10U; // bytes per body read (basis: TLS record size)

bool retryable_status(unsigned s) {
    return s == 408 || s == 429 || (s >= 500 && s <= 599);
}

/// One attempt's outcome.
struct Outcome {
    error_code ec;
    std::string message;
    bool retryable{};
    HttpResponse response;
};

} // namespace

using detail::parse_target;
using detail::seconds_text;
using detail::Target;
using detail::base64;
using detail::iequals;

struct HttpClient::impl {
    HttpOptions options;
    std::string last_error;
    std::unique_ptr<ssl::context> tls;

    // Cancellation plumbing: a dup() of the live socket's fd, guarded for the cancelling
    // thread. A dup, because Beast closes its own fd on a timeout and the number could be
    // reused by another thread's file before the attempt ends; ours stays ours until closed.
    std::mutex fd_mutex;
    int live_fd{-1};
    std::atomic<bool> cancelled{false};

    // Only touched on the request's thread (inside the io_context).
    beast::tcp_stream* live_stream{};
    tcp::resolver* live_resolver{};
    net::steady_timer* live_timer{};

    ssl::context& tls_context() {
        if (!tls) {
            tls = std::make_unique<ssl::context>(ssl::context::tls_client);
            tls->set_default_verify_paths();
            tls->set_verify_mode(ssl::verify_peer);
            tls->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3);
            if (!options.extra_ca_pem.empty()) {
                tls->add_certificate_authority(net::buffer(options.extra_ca_pem));
            }
        }
        return *tls;
    }

    void set_live_fd(int fd) {
        const std::lock_guard lock(fd_mutex);
        if (live_fd >= 0) {
            ::close(live_fd);
        }
        live_fd = fd >= 0 ? ::dup(fd) : -1;
    }

    /// Runs on the cancelling thread: unblock a pending read at once, then tidy up on the
    /// request's own thread (Asio objects are never touched from here).
    void on_cancel(net::io_context& io) {
        cancelled = true;
        {
            const std::lock_guard lock(fd_mutex);
            if (live_fd >= 0) {
                // Abortive close: the peer gets a reset at once, even if its data sits unread
                // in our buffers (a plain FIN leaves a flooding server blocked on a zero window).
                const ::linger abort{1, 0};
                ::setsockopt(live_fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
                ::shutdown(live_fd, SHUT_RDWR);
            }
        }
        net::post(io, [this] {
            if (live_stream != nullptr) {
                live_stream->cancel();
            }
            if (live_resolver != nullptr) {
                live_resolver->cancel();
            }
            if (live_timer != nullptr) {
                live_timer->cancel();
            }
        });
    }

    Outcome fail(error_code ec, std::string message, bool retryable = false) {
        if (cancelled) {
            return {errc::cancelled, "cancelled", false, {}};
        }
        return {ec, std::move(message), retryable, {}};
    }

    net::awaitable<Outcome> attempt(
        const HttpRequest& req, const Target& target, const BodyCallback& on_body);

    template <class Stream>
    net::awaitable<Outcome> exchange(
        Stream& stream,
        beast::tcp_stream& lowest,
        const HttpRequest& req,
        const Target& target,
        bool absolute_form,
        const std::string& proxy_auth,
        const BodyCallback& on_body);

    net::awaitable<Outcome> run(const HttpRequest& req, const BodyCallback& on_body);
};

template <class Stream>
net::awaitable<Outcome> HttpClient::impl::exchange(
    Stream& stream,
    beast::tcp_stream& lowest,
    const HttpRequest& req,
    const Target& target,
    bool absolute_form,
    const std::string& proxy_auth,
    const BodyCallback& on_body) {
    bhttp::request<bhttp::string_body> msg;
    msg.method_string(req.method);
    msg.target(absolute_form ? target.absolute : target.path);
    msg.version(11);
    msg.set(bhttp::field::host, target.host_hdr);
    msg.set(bhttp::field::user_agent, "sluice/0.1");
    if (!proxy_auth.empty()) {
        msg.set(bhttp::field::proxy_authorization, proxy_auth);
    }
    for (const auto& [k, v] : req.headers) {
        msg.insert(k, v);
    }
    msg.body() = req.body;
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT") {
        msg.prepare_payload();
    }
    lowest.expires_after(options.first_byte_timeout);
    if (auto [ec, n] = co_await bhttp::async_write(stream, msg, TUPLE); ec) {
        co_return fail(errc::io_error, "sending the request to " + target.host_hdr + " failed: " + ec.message(), true);
    }
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(64U << 10U);
    if (req.method == "HEAD") {
        parser.skip(true);
    }
    if (auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, TUPLE); ec) {
        if (ec == beast::error::timeout) {
            co_return fail(
                errc::timed_out,
                "no response from " + target.host_hdr + " within "
                    + seconds_text(options.first_byte_timeout));
        }
        co_return fail(errc::io_error, "reading the response from " + target.host_hdr + " failed: " + ec.message());
    }
    Outcome out;
    const auto& head = parser.get();
    out.response.status = head.result_int();
    for (const auto& f : head) {
        out.response.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    }
    const bool ok = out.response.status >= 200 && out.response.status < 300;
    std::vector<char> chunk(READ_CHUNK);
    while (!parser.is_done()) {
        parser.get().body().data = chunk.data();
        parser.get().body().size = chunk.size();
        if (options.idle_timeout.count() > 0) {
            lowest.expires_after(options.idle_timeout);
        } else {
            lowest.expires_never();
        }
        auto [ec, n] = co_await bhttp::async_read_some(stream, buffer, parser, TUPLE);
        if (ec == bhttp::error::need_buffer) {
            ec = {};
        }
        if (ec == ssl::error::stream_truncated && parser.need_eof()) {
            // A TLS peer that closes without close_notify ends a read-until-close body.
            ec = {};
            parser.put_eof(ec);
        }
        const std::size_t got = chunk.size() - parser.get().body().size;
        if (got > 0) {
            if (ok) {
                if (!on_body(std::string_view(chunk.data(), got))) {
                    // The caller stopped early: reset rather than drain the rest.
                    error_code ignored;
                    lowest.socket().set_option(net::socket_base::linger(true, 0), ignored);
                    co_return out;
                }
            } else if (out.response.body.size() < options.max_error_body) {
                out.response.body.append(
                    chunk.data(), std::min(got, options.max_error_body - out.response.body.size()));
            }
        }
        if (ec) {
            if (cancelled) {
                co_return fail(errc::cancelled, "cancelled");
            }
            if (ec == beast::error::timeout) {
                co_return fail(
                    errc::timed_out,
                    "the response from " + target.host_hdr + " stalled for "
                        + seconds_text(options.idle_timeout));
            }
            if (!ok) {
                break; // a cut error body still tells enough
            }
            co_return fail(errc::io_error, "the response from " + target.host_hdr + " was cut off: " + ec.message());
        }
    }
    if (cancelled) {
        co_return fail(errc::cancelled, "cancelled");
    }
    out.retryable = retryable_status(out.response.status);
    co_return out;
}

net::awaitable<Outcome> HttpClient::impl::attempt(
    const HttpRequest& req, const Target& target, const BodyCallback& on_body) {
    auto ex = co_await net::this_coro::executor;
    // Which host to dial: the proxy, or the target itself.
    std::string proxy_url = options.proxy.has_value()
        ? *options.proxy
        : proxy_from_environment(target.tls ? "https" : "http", target.host);
    std::optional<Target> proxy;
    std::string proxy_auth;
    if (!proxy_url.empty()) {
        if (proxy_url.find("://") == std::string::npos) {
            proxy_url = "http://" + proxy_url;
        }
        auto p = parse_target(proxy_url);
        if (!p || p->tls) {
            co_return fail(errc::bad_request, "unsupported proxy URL: " + proxy_url);
        }
        proxy = *p;
        if (!proxy->userinfo.empty()) {
            proxy_auth = "Basic " + base64(proxy->userinfo);
        }
    }
    const Target& dial = proxy ? *proxy : target;

    tcp::resolver resolver(ex);
    net::steady_timer deadline(ex);
    live_timer = &deadline;
    live_resolver = &resolver;
    deadline.expires_after(options.connect_timeout);
    bool resolve_timed_out = false;
    deadline.async_wait([&](error_code ec) {
        if (!ec) {
            resolve_timed_out = true;
            resolver.cancel();
        }
    });
    auto [rec, endpoints] =
        co_await resolver.async_resolve(dial.host, std::to_string(dial.port), TUPLE);
    deadline.cancel();
    live_timer = nullptr;
    live_resolver = nullptr;
    if (rec) {
        co_return fail(
            errc::io_error,
            "cannot resolve " + dial.host + ": "
                + (resolve_timed_out ? std::string("timed out") : rec.message()),
            rec != net::error::host_not_found);
    }
    beast::tcp_stream lowest(ex);
    live_stream = &lowest;
    struct Unlive {
        impl* self;
        ~Unlive() {
            self->set_live_fd(-1);
            self->live_stream = nullptr;
        }
    } unlive{this};
    if (cancelled) {
        co_return fail(errc::cancelled, "cancelled");
    }
    lowest.expires_after(options.connect_timeout);
    auto [cec, ep] = co_await lowest.async_connect(endpoints, TUPLE);
    if (cec) {
        const bool timeout = cec == beast::error::timeout;
        co_return fail(
            timeout ? errc::timed_out : errc::io_error,
            "cannot connect to " + dial.host_hdr + ": "
                + (timeout ? "timed out after " + seconds_text(options.connect_timeout) : cec.message()),
            true);
    }
    set_live_fd(lowest.socket().native_handle());
    if (cancelled) {
        co_return fail(errc::cancelled, "cancelled");
    }

    if (proxy && target.tls) {
        // A CONNECT tunnel through the proxy, then TLS inside it.
        const std::string authority = target.host_hdr.find(':') == std::string::npos
                || target.host_hdr.back() == ']'
            ? target.host_hdr + ":" + std::to_string(target.port)
            : target.host_hdr;
        bhttp::request<bhttp::empty_body> connect{bhttp::verb::connect, authority, 11};
        connect.set(bhttp::field::host, authority);
        if (!proxy_auth.empty()) {
            connect.set(bhttp::field::proxy_authorization, proxy_auth);
        }
        if (auto [ec, n] = co_await bhttp::async_write(lowest, connect, TUPLE); ec) {
            co_return fail(errc::io_error, "proxy " + dial.host_hdr + " failed: " + ec.message(), true);
        }
        beast::flat_buffer buf;
        bhttp::response_parser<bhttp::empty_body> reply;
        reply.skip(true); // a CONNECT reply has no body
        if (auto [ec, n] = co_await bhttp::async_read_header(lowest, buf, reply, TUPLE); ec) {
            co_return fail(errc::io_error, "proxy " + dial.host_hdr + " failed: " + ec.message(), true);
        }
        if (reply.get().result_int() / 100 != 2) {
            co_return fail(
                errc::protocol_error,
                "proxy " + dial.host_hdr + " refused CONNECT " + authority + ": HTTP "
                    + std::to_string(reply.get().result_int()));
        }
    }
    if (target.tls) {
        beast::ssl_stream<beast::tcp_stream&> tls_stream(lowest, tls_context());
        error_code not_ip;
        (void)net::ip::make_address(target.host, not_ip);
        // SNI carries host names only (RFC 6066), never an IP literal.
        if (not_ip && SSL_set_tlsext_host_name(tls_stream.native_handle(), target.host.c_str()) != 1) {
            co_return fail(errc::io_error, "TLS: cannot set SNI for " + target.host);
        }
        tls_stream.set_verify_callback(ssl::host_name_verification(target.host));
        lowest.expires_after(options.connect_timeout);
        if (auto [ec] = co_await tls_stream.async_handshake(ssl::stream_base::client, TUPLE); ec) {
            co_return fail(
                errc::io_error, "TLS handshake with " + target.host_hdr + " failed: " + ec.message(), true);
        }
        co_return co_await exchange(tls_stream, lowest, req, target, false, proxy_auth, on_body);
    }
    co_return co_await exchange(lowest, lowest, req, target, proxy.has_value(), proxy_auth, on_body);
}

net::awaitable<Outcome> HttpClient::impl::run(const HttpRequest& req, const BodyCallback& on_body) {
    auto parsed = parse_target(req.url);
    if (!parsed) {
        co_return Outcome{errc::bad_request, "invalid URL: " + req.url, false, {}};
    }
    const unsigned attempts = std::max(1U, options.max_attempts);
    std::minstd_rand jitter(std::random_device{}());
    Outcome last;
    for (unsigned i = 1;; ++i) {
        last = co_await attempt(req, *parsed, on_body);
        last.response.attempts = i;
        if (!last.retryable || i >= attempts || cancelled) {
            co_return last;
        }
        // Back off: doubling, capped, with jitter; a server's Retry-After wins.
        std::chrono::milliseconds delay = options.backoff_initial * (1LL << std::min(i - 1, 20U));
        delay = std::min(delay, options.backoff_max);
        delay = delay * (80 + static_cast<std::int64_t>(jitter() % 41)) / 100;
        if (const auto ra = last.response.header("retry-after"); !ra.empty()
            && std::all_of(ra.begin(), ra.end(), [](char c) { return c >= '0' && c <= '9'; })
            && ra.size() < 6) {
            delay = std::min(
                std::chrono::milliseconds(std::stoll(ra) * 1000), options.retry_after_max);
        }
        const std::string why = last.ec ? last.message
                                        : "HTTP " + std::to_string(last.response.status);
        if (options.on_retry) {
            options.on_retry(
                why + "; retrying in " + seconds_text(delay) + " (attempt " + std::to_string(i + 1)
                + " of " + std::to_string(attempts) + ")");
        }
        net::steady_timer wait(co_await net::this_coro::executor);
        live_timer = &wait;
        wait.expires_after(delay);
        co_await wait.async_wait(TUPLE);
        live_timer = nullptr;
        if (cancelled) {
            co_return Outcome{errc::cancelled, "cancelled", false, {}};
        }
    }
}

HttpClient::HttpClient(HttpOptions options)
    : impl_(std::make_unique<impl>()) {
    impl_->options = std::move(options);
}

HttpClient::~HttpClient() = default;

const HttpOptions& HttpClient::options() const noexcept {
    return impl_->options;
}

std::string HttpClient::error_message() const {
    return impl_->last_error;
}

boost::system::result<HttpResponse> HttpClient::request(
    const HttpRequest& req, const CancellationToken& cancel, const BodyCallback& on_body) {
    auto& s = *impl_;
    s.last_error.clear();
    s.cancelled = cancel.is_cancelled();
    if (s.cancelled) {
        s.last_error = "cancelled";
        return errc::cancelled;
    }
    net::io_context io;
    std::optional<Outcome> result;
    std::exception_ptr failure;
    net::co_spawn(io, s.run(req, on_body), [&](std::exception_ptr e, Outcome o) {
        failure = e;
        result = std::move(o);
    });
    {
        // Declared after `io`, so it is unregistered (waiting for a running callback) first.
        const auto registration = cancel.on_cancel([&s, &io] { s.on_cancel(io); });
        io.run();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    if (result->ec) {
        s.last_error = result->message;
        return result->ec;
    }
    return std::move(result->response);
}

} // namespace sluice::runtime
