// The HTTP/1.1 client coroutine: connect (direct, proxy, CONNECT tunnel, TLS), send, stream, retry.
#include "http_client_detail.hpp"

#include <sluice/core/error.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/net/http_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <random>
#include <tuple>

namespace sluice::transport {

namespace {

namespace bhttp = boost::beast::http;
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

using detail::base64;
using detail::parse_target;
using detail::seconds_text;
using detail::Target;

/// One request's cancellation state, shared with the token's callback so a cancel that races
/// the end of the request never touches a dead object.
struct Live {
    std::atomic<bool> cancelled{false};
    // Strand-confined: the Asio objects of the attempt in flight (null between attempts).
    beast::tcp_stream* stream{};
    tcp::resolver* resolver{};
    net::steady_timer* timer{};

    /// Runs on the request's strand: ends whatever the attempt waits for.
    void abort() const {
        if (stream != nullptr) {
            // Abortive close: the peer gets a reset at once, even if its data sits unread in
            // our buffers (a plain FIN leaves a flooding server blocked on a zero window).
            error_code ignored;
            stream->socket().set_option(net::socket_base::linger(true, 0), ignored);
            stream->close();
        }
        if (resolver != nullptr) {
            resolver->cancel();
        }
        if (timer != nullptr) {
            timer->cancel();
        }
    }
};

struct HttpClient::impl {
    HttpOptions options;
    std::string last_error;
    std::unique_ptr<ssl::context> tls;

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

    static Outcome
    fail(const Live& live, error_code ec, std::string message, bool retryable = false) {
        if (live.cancelled) {
            return {errc::cancelled, "cancelled", false, {}};
        }
        return {ec, std::move(message), retryable, {}};
    }

    net::awaitable<Outcome>
    attempt(Live& live, const HttpRequest& req, const Target& target, const BodyCallback& on_body);

    template <class Stream>
    net::awaitable<Outcome> exchange(
        Live& live,
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
            co_return fail(
                live,
                errc::io_error,
                "sending the request to " + target.host_hdr + " failed: " + ec.message(),
                true);
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
                    live,
                    errc::timed_out,
                    "no response from " + target.host_hdr + " within "
                        + seconds_text(options.first_byte_timeout));
            }
            co_return fail(
                live,
                errc::io_error,
                "reading the response from " + target.host_hdr + " failed: " + ec.message());
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
                    const bool more = on_body(std::string_view(chunk.data(), got));
                    if (live.cancelled) {
                        co_return fail(live, errc::cancelled, "cancelled");
                    }
                    if (!more) {
                        // The caller stopped early: reset rather than drain the rest.
                        error_code ignored;
                        lowest.socket().set_option(net::socket_base::linger(true, 0), ignored);
                        co_return out;
                    }
                } else if (out.response.body.size() < options.max_error_body) {
                    out.response.body.append(
                        chunk.data(),
                        std::min(got, options.max_error_body - out.response.body.size()));
                }
            }
            if (ec) {
                if (live.cancelled) {
                    co_return fail(live, errc::cancelled, "cancelled");
                }
                if (ec == beast::error::timeout) {
                    co_return fail(
                        live,
                        errc::timed_out,
                        "the response from " + target.host_hdr + " stalled for "
                            + seconds_text(options.idle_timeout));
                }
                if (!ok) {
                    break; // a cut error body still tells enough
                }
                co_return fail(
                    live,
                    errc::io_error,
                    "the response from " + target.host_hdr + " was cut off: " + ec.message());
            }
        }
        if (live.cancelled) {
            co_return fail(live, errc::cancelled, "cancelled");
        }
        out.retryable = retryable_status(out.response.status);
        co_return out;
    }

    net::awaitable<Outcome> run(Live& live, const HttpRequest& req, const BodyCallback& on_body);
};

net::awaitable<Outcome> HttpClient::impl::attempt(
    Live& live, const HttpRequest& req, const Target& target, const BodyCallback& on_body) {
    auto ex = co_await net::this_coro::executor;
    // Which host to dial: the proxy, or the target itself.
    std::string proxy_url =
        options.proxy.has_value()
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
            co_return fail(live, errc::bad_request, "unsupported proxy URL: " + proxy_url);
        }
        proxy = *p;
        if (!proxy->userinfo.empty()) {
            proxy_auth = "Basic " + base64(proxy->userinfo);
        }
    }
    const Target& dial = proxy ? *proxy : target;

    tcp::resolver resolver(ex);
    net::steady_timer deadline(ex);
    live.timer = &deadline;
    live.resolver = &resolver;
    deadline.expires_after(options.connect_timeout);
    bool resolve_timed_out = false;
    deadline.async_wait([&](error_code ec) {
        if (!ec) {
            resolve_timed_out = true;
            resolver.cancel();
        }
    });
    error_code not_literal;
    const auto literal = net::ip::make_address(dial.host, not_literal);
    error_code rec;
    tcp::resolver::results_type endpoints;
    if (!not_literal) {
        // An IP literal needs no lookup (and so no resolver thread inside Asio).
        endpoints = tcp::resolver::results_type::create(
            tcp::endpoint(literal, dial.port), dial.host, std::to_string(dial.port));
    } else {
        const std::string service = std::to_string(dial.port);
        std::tie(rec, endpoints) = co_await resolver.async_resolve(dial.host, service, TUPLE);
    }
    deadline.cancel();
    live.timer = nullptr;
    live.resolver = nullptr;
    if (rec) {
        co_return fail(
            live,
            errc::io_error,
            "cannot resolve " + dial.host + ": "
                + (resolve_timed_out ? std::string("timed out") : rec.message()),
            rec != net::error::host_not_found);
    }
    beast::tcp_stream lowest(ex);
    live.stream = &lowest;

    struct Unlive {
        Live* live;

        ~Unlive() { live->stream = nullptr; }
    } unlive{&live};

    if (live.cancelled) {
        co_return fail(live, errc::cancelled, "cancelled");
    }
    lowest.expires_after(options.connect_timeout);
    auto [cec, ep] = co_await lowest.async_connect(endpoints, TUPLE);
    if (cec) {
        const bool timeout = cec == beast::error::timeout;
        co_return fail(
            live,
            timeout ? errc::timed_out : errc::io_error,
            "cannot connect to " + dial.host_hdr + ": "
                + (timeout ? "timed out after " + seconds_text(options.connect_timeout)
                           : cec.message()),
            true);
    }
    if (live.cancelled) {
        co_return fail(live, errc::cancelled, "cancelled");
    }

    if (proxy && target.tls) {
        // A CONNECT tunnel through the proxy, then TLS inside it.
        const std::string authority =
            target.host_hdr.find(':') == std::string::npos || target.host_hdr.back() == ']'
                ? target.host_hdr + ":" + std::to_string(target.port)
                : target.host_hdr;
        bhttp::request<bhttp::empty_body> connect{bhttp::verb::connect, authority, 11};
        connect.set(bhttp::field::host, authority);
        if (!proxy_auth.empty()) {
            connect.set(bhttp::field::proxy_authorization, proxy_auth);
        }
        if (auto [ec, n] = co_await bhttp::async_write(lowest, connect, TUPLE); ec) {
            co_return fail(
                live, errc::io_error, "proxy " + dial.host_hdr + " failed: " + ec.message(), true);
        }
        beast::flat_buffer buf;
        bhttp::response_parser<bhttp::empty_body> reply;
        reply.skip(true); // a CONNECT reply has no body
        if (auto [ec, n] = co_await bhttp::async_read_header(lowest, buf, reply, TUPLE); ec) {
            co_return fail(
                live, errc::io_error, "proxy " + dial.host_hdr + " failed: " + ec.message(), true);
        }
        if (reply.get().result_int() / 100 != 2) {
            co_return fail(
                live,
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
        if (not_ip
            && SSL_set_tlsext_host_name(tls_stream.native_handle(), target.host.c_str()) != 1) {
            co_return fail(live, errc::io_error, "TLS: cannot set SNI for " + target.host);
        }
        tls_stream.set_verify_callback(ssl::host_name_verification(target.host));
        lowest.expires_after(options.connect_timeout);
        if (auto [ec] = co_await tls_stream.async_handshake(ssl::stream_base::client, TUPLE); ec) {
            co_return fail(
                live,
                errc::io_error,
                "TLS handshake with " + target.host_hdr + " failed: " + ec.message(),
                true);
        }
        co_return co_await exchange(
            live, tls_stream, lowest, req, target, false, proxy_auth, on_body);
    }
    co_return co_await exchange(
        live, lowest, lowest, req, target, proxy.has_value(), proxy_auth, on_body);
}

net::awaitable<Outcome>
HttpClient::impl::run(Live& live, const HttpRequest& req, const BodyCallback& on_body) {
    auto parsed = parse_target(req.url);
    if (!parsed) {
        co_return Outcome{errc::bad_request, "invalid URL: " + req.url, false, {}};
    }
    const unsigned attempts = std::max(1U, options.max_attempts);
    std::minstd_rand jitter(std::random_device{}());
    Outcome last;
    for (unsigned i = 1;; ++i) {
        last = co_await attempt(live, req, *parsed, on_body);
        last.response.attempts = i;
        if (!last.retryable || i >= attempts || live.cancelled) {
            co_return last;
        }
        // Back off: doubling, capped, with jitter; a server's Retry-After wins.
        std::chrono::milliseconds delay = options.backoff_initial * (1LL << std::min(i - 1, 20U));
        delay = std::min(delay, options.backoff_max);
        delay = delay * (80 + static_cast<std::int64_t>(jitter() % 41)) / 100;
        if (const auto ra = last.response.header("retry-after");
            !ra.empty()
            && std::all_of(ra.begin(), ra.end(), [](char c) { return c >= '0' && c <= '9'; })
            && ra.size() < 6) {
            delay =
                std::min(std::chrono::milliseconds(std::stoll(ra) * 1000), options.retry_after_max);
        }
        const std::string why =
            last.ec ? last.message : "HTTP " + std::to_string(last.response.status);
        if (options.on_retry) {
            options.on_retry(
                why + "; retrying in " + seconds_text(delay) + " (attempt " + std::to_string(i + 1)
                + " of " + std::to_string(attempts) + ")");
        }
        const auto ex = co_await net::this_coro::executor;
        net::steady_timer wait(ex);
        live.timer = &wait;
        wait.expires_after(delay);
        co_await wait.async_wait(TUPLE);
        live.timer = nullptr;
        if (live.cancelled) {
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

net::awaitable<boost::system::result<HttpResponse>>
HttpClient::request(HttpRequest req, CancellationToken cancel, BodyCallback on_body) {
    auto& s = *impl_;
    s.last_error.clear();
    if (cancel.is_cancelled()) {
        s.last_error = "cancelled";
        co_return errc::cancelled;
    }
    // The I/O runs on a strand of the caller's executor, and so does the cancel path: the
    // token's callback (any thread) only posts there, and Asio objects are touched on it alone.
    // (The executor is named first: GCC 12 may destroy a temporary inside a co_await
    // expression twice, and a strand's is reference-counted.)
    const auto caller = co_await net::this_coro::executor;
    const auto strand = net::make_strand(caller);
    const auto live = std::make_shared<Live>();
    const auto registration = cancel.on_cancel([live, strand] {
        live->cancelled = true;
        net::post(strand, [live] { live->abort(); });
    });
    Outcome result = co_await net::co_spawn(
        strand,
        [&s, &live, &req, &on_body]() { return s.run(*live, req, on_body); },
        net::use_awaitable);
    if (result.ec) {
        s.last_error = result.message;
        co_return result.ec;
    }
    co_return std::move(result.response);
}

boost::system::result<HttpResponse>
HttpClient::request_blocking(HttpRequest req, CancellationToken cancel, BodyCallback on_body) {
    net::io_context io;
    std::optional<boost::system::result<HttpResponse>> result;
    std::exception_ptr failure;
    net::co_spawn(
        io,
        request(std::move(req), std::move(cancel), std::move(on_body)),
        [&](const std::exception_ptr& e, boost::system::result<HttpResponse> r) {
            failure = e;
            result = std::move(r);
        });
    io.run();
    if (failure) {
        std::rethrow_exception(failure);
    }
    return std::move(*result);
}

} // namespace sluice::transport
