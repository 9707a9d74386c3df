// An HTTP/1.1 client coroutine (http and https, proxies, timeouts, retries, cancellation) that
// streams a response body to a callback chunk by chunk.
#pragma once

#include <sluice/core/cancel.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::transport {

/// Header fields, in order, as name/value pairs.
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

/// One request.
struct HttpRequest {
    std::string method{"GET"}; ///< GET, POST, …
    std::string url{};         ///< absolute http:// or https:// URL
    HttpHeaders headers{};     ///< extra headers (Host, Content-Length and User-Agent are set)
    std::string body{};        ///< request body (may be empty)
};

/// Client settings.
struct HttpOptions {
    /// Resolve + TCP connect (+ proxy CONNECT + TLS handshake), per attempt.
    std::chrono::milliseconds connect_timeout{10'000};
    /// From the request sent to the response header. Basis: LLM APIs answer headers within
    /// seconds even for long generations, since the body is streamed.
    std::chrono::milliseconds first_byte_timeout{120'000};
    /// Longest silence allowed between body chunks (0: none). Anthropic pings every ~15 s.
    std::chrono::milliseconds idle_timeout{300'000};
    /// Attempts in all (1: no retry). Retried: connect failures, 408, 429 and 5xx, always
    /// before any body byte reached the caller.
    unsigned max_attempts{4};
    std::chrono::milliseconds backoff_initial{500};    ///< first retry delay (doubled each time)
    std::chrono::milliseconds backoff_max{8'000};      ///< cap on a computed delay
    std::chrono::milliseconds retry_after_max{60'000}; ///< cap on a server's Retry-After
    /// Proxy URL; nullopt: from HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case); "": none.
    std::optional<std::string> proxy{};
    /// Extra PEM certificate(s) to trust besides the system store (a private CA, tests).
    std::string extra_ca_pem{};
    std::size_t max_error_body{64U << 10U}; ///< bytes of a non-2xx body kept for the message
    /// Told (one line) before each retry, on the request's executor; may be empty.
    std::function<void(const std::string&)> on_retry{};
};

/// A response's status and headers; for a non-2xx status also its (capped) body.
struct HttpResponse {
    unsigned status{};     ///< HTTP status code
    HttpHeaders headers{}; ///< response headers
    std::string body{};    ///< non-2xx only: the body, up to max_error_body bytes
    unsigned attempts{};   ///< attempts made

    /// The first header named `name` (case-insensitive), or "".
    [[nodiscard]] std::string header(std::string_view name) const;
};

/// Receives a 2xx body chunk by chunk as it arrives, on the request's executor; return false to
/// stop reading (the connection is closed and `request` returns the response normally).
using BodyCallback = std::function<bool(std::string_view chunk)>;

/// An HTTP/1.1 client: one connection per request, closed when the request ends.
///
/// `request` is a coroutine that runs its I/O on the awaiting coroutine's executor (through a
/// strand of it, so the cancel path is serialized with the I/O); it owns no thread and no
/// io_context. Cancelling the token (from any thread) posts an abortive close of the socket to
/// that strand, which ends a pending read at once and the request with errc::cancelled.
/// Errors are sluice::errc: io_error (unreachable, reset, cut mid-body), timed_out, cancelled,
/// bad_request (bad URL), protocol_error (bad HTTP, proxy refusal), with error_message() set.
///
/// @par Thread safety
/// One request at a time per instance; the token may be cancelled from any thread.
class HttpClient {
public:
    /// A client with the given options.
    explicit HttpClient(HttpOptions options = {});

    /// Destroys the client (no request may be running).
    ~HttpClient();

    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    /// Sends `req` and streams a 2xx body to `on_body`; completes when the body ended,
    /// `on_body` returned false, or it failed. A non-2xx response (after retries) is returned,
    /// not an error: check `status`. Exceptions thrown by `on_body` propagate.
    /// @par Lifetime
    /// The client must outlive the awaited operation; the arguments are copied into it.
    boost::asio::awaitable<boost::system::result<HttpResponse>>
    request(HttpRequest req, CancellationToken cancel, BodyCallback on_body);

    /// As `request`, run to completion on a private io_context on the calling thread (for the
    /// CLI and other plain-thread callers; never call it on an I/O thread).
    boost::system::result<HttpResponse>
    request_blocking(HttpRequest req, CancellationToken cancel, BodyCallback on_body);

    /// One line explaining the last error `request` returned.
    [[nodiscard]] std::string error_message() const;

    /// The options in force.
    [[nodiscard]] const HttpOptions& options() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Whether `host` is excluded from proxying by a NO_PROXY value (comma-separated names,
/// ".suffix" or "suffix" domain matches, "*" for all; ports are ignored).
[[nodiscard]] bool no_proxy_matches(std::string_view no_proxy, std::string_view host);

/// The proxy URL the environment chooses for `scheme` ("http"/"https") and `host`, or "".
[[nodiscard]] std::string proxy_from_environment(std::string_view scheme, std::string_view host);

} // namespace sluice::transport
