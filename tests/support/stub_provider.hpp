// StubProvider: a real loopback HTTP/1.1 server on 127.0.0.1:0 that serves canned (SSE) responses.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::test {

/// What the stub streams after a canned body, until the client goes away.
enum class StubFlood : std::uint8_t {
    none,      ///< end the response after the body
    anthropic, ///< Anthropic `content_block_delta` text deltas forever
    openai,    ///< Chat Completions `choices[0].delta.content` chunks forever
};

/// One canned response. The body is sent with `Transfer-Encoding: chunked` (like the real APIs),
/// cut at `chunk_size` byte boundaries (0: one piece), each piece after `pace`.
/// The connection is closed after the response (`Connection: close`).
struct StubResponse {
    unsigned status{200};                                       ///< HTTP status
    std::vector<std::pair<std::string, std::string>> headers{}; ///< extra headers
    std::string content_type{"text/event-stream"};              ///< Content-Type
    std::string body{};                                         ///< bytes sent as the body
    std::size_t chunk_size{0};                                  ///< split the body (0: whole)
    std::chrono::milliseconds pace{0};                          ///< sleep before each piece
    StubFlood flood{StubFlood::none};  ///< stream deltas forever after body
    std::size_t flood_delta_bytes{64}; ///< text bytes in one flood delta
    bool content_length{false};        ///< send Content-Length instead of chunked encoding
    bool truncate{false};              ///< close the socket after the body without the final chunk
};

/// A request the stub received.
struct StubRequest {
    std::string method;                                       ///< GET, POST, CONNECT…
    std::string target;                                       ///< request target as sent
    std::vector<std::pair<std::string, std::string>> headers; ///< headers as sent
    std::string body;                                         ///< the request body
    std::string sni{};                                        ///< TLS server name sent (TLS only)

    /// The first header named `name` (case-insensitive), or "".
    [[nodiscard]] std::string header(std::string_view name) const;
};

/// How the stub listens.
struct StubOptions {
    /// Serve HTTPS with a fresh self-signed certificate for "localhost" and 127.0.0.1
    /// (trust it with `ca_pem()`).
    bool tls{false};
};

/// A loopback HTTP server for provider and CLI tests.
///
/// Listens on 127.0.0.1 on an ephemeral port from construction until destruction, on its own
/// thread and io_context. Each connection reads one request, records it, pops the next canned
/// response (an empty queue answers 500 "stub: no canned response") and serves it; connections
/// are handled concurrently. A response whose client goes away mid-body (a write fails) counts
/// as "closed by client". After a complete body the stub half-closes and waits (up to 30 s) for
/// the client to close its side before dropping the connection.
///
/// @par Thread safety
/// Every member function is safe from any thread.
class StubProvider {
public:
    /// Starts listening on 127.0.0.1:0 (plain HTTP).
    StubProvider();

    /// Starts listening on 127.0.0.1:0 with the given options.
    explicit StubProvider(StubOptions options);

    /// Stops the server, closing every connection, and joins its thread.
    ~StubProvider();

    StubProvider(const StubProvider&) = delete;
    StubProvider& operator=(const StubProvider&) = delete;

    /// The port it listens on.
    [[nodiscard]] std::uint16_t port() const noexcept;

    /// "http://127.0.0.1:<port>", or "https://localhost:<port>" with TLS.
    [[nodiscard]] std::string base_url() const;

    /// The PEM certificate a client must trust to reach a TLS stub ("" without TLS).
    [[nodiscard]] std::string ca_pem() const;

    /// Appends a canned response to the queue (served in order, one per request).
    void enqueue(StubResponse response);

    /// The requests received so far, in arrival order.
    [[nodiscard]] std::vector<StubRequest> requests() const;

    /// How many requests were received so far.
    [[nodiscard]] std::size_t request_count() const;

    /// How many responses ended because the client closed the connection mid-body.
    [[nodiscard]] std::size_t closed_by_client_count() const;

    /// Waits until at least `n` responses were ended by their client; false on timeout.
    bool wait_closed_by_client(std::size_t n, std::chrono::milliseconds timeout) const;

    /// Waits until at least `n` requests arrived; false on timeout.
    bool wait_requests(std::size_t n, std::chrono::milliseconds timeout) const;

    /// Body bytes written to clients so far (all responses, flood included).
    [[nodiscard]] std::uint64_t bytes_sent() const noexcept;

    /// How many responses are being written right now.
    [[nodiscard]] std::size_t active_responses() const;

    /// Frames a file of one SSE `data:` payload per line (vercel `.chunks.txt`) as an SSE body.
    [[nodiscard]] static std::string sse_from_data_lines(std::string_view lines);

    /// Ends a captured SSE body with a blank line if it lacks one (the SDK fixture files stop
    /// right after their last data line; a live server always ends the event).
    [[nodiscard]] static std::string terminated_sse(std::string body);

    /// Reads a whole file (a fixture) into a string; throws std::runtime_error if unreadable.
    [[nodiscard]] static std::string read_file(const std::string& path);

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace sluice::test
