// Server: the hub's HTTP/1.1 front — JSON API, SSE, WebSocket, the page and /metrics.
#pragma once

#include <sluice/hub/forward.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/push/sender.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice::server {

/// One agent kind a seat may be created with (`POST /v1/seats` `agent`), and whether this hub
/// can run it.
struct AgentKind {
    std::string kind;     ///< "builtin", "claude", "codex", "acp" or "process"
    bool available{true}; ///< false: a create with it is refused, for `reason`
    std::string detail;   ///< what runs it, e.g. the builtin provider and model
    std::string reason;   ///< why it is not available
    /// acp: the command lines a seat may name as its `cmd` (`serve --acp-agent`), exactly.
    std::vector<std::string> commands{};
};

/// Listener and protocol settings.
struct ServerConfig {
    std::string listen{"127.0.0.1:8420"}; ///< address:port (port 0: any free port)
    /// An already-listening TCP socket to adopt instead of binding `listen` (socket activation:
    /// systemd passed it); -1: none. The server owns (and closes) it once `start` adopted it.
    int listen_fd{-1};
    std::string token; ///< the owner's bearer token; empty: none needed (loopback only)
    std::filesystem::path token_dir;        ///< where viewer tokens live (empty: no viewers)
    std::vector<std::string> allow_hosts;   ///< more names the Host header may carry
    std::vector<std::string> allow_origins; ///< foreign origins let in ("*": any)
    std::string public_url;                 ///< the URL people use (its host and origin are ours)
    unsigned auth_free_failures{8};         ///< wrong tokens per peer before 429 backoff
    std::string tls_cert; ///< PEM certificate chain file: serve HTTPS and WSS (with tls_key)
    std::string tls_key;  ///< PEM private key file
    /// A TLS proxy is in front: its `X-Forwarded-Proto` (trusted from loopback peers only)
    /// says the scheme of the hub's own origin.
    bool behind_proxy{false};
    std::size_t max_connections{20'000};              ///< more are answered 503 and closed
    std::size_t max_body_bytes{1024 * 1024};          ///< larger bodies get 413
    std::chrono::milliseconds header_timeout{10'000}; ///< slow-header guard (first request)
    std::chrono::milliseconds idle_timeout{60'000};   ///< keep-alive idle limit
    std::chrono::milliseconds heartbeat{15'000};      ///< SSE comment / WS ping interval
    /// A subscriber whose write makes no progress for this long is let go (it resumes by
    /// Last-Event-ID). Basis: twice the heartbeat, so a client that reads at all (even only
    /// heartbeats, through a slow link) is never cut, while a stalled one holds its socket
    /// buffers and one batch for at most 30 s (counted: subscriber_let_go_total{reason=
    /// "write_timeout"}).
    ///
    /// What the client sees of a let-go. Lagged (its cursor fell behind the window front,
    /// noticed when its writer next collects, i.e. once the write it was in completes): its
    /// stream ends with the reason, as an SSE comment `: bye: lagged behind the window front;
    /// reconnect with Last-Event-ID` or a WebSocket close 1013 (try again later) with that
    /// reason (tests/e2e/edges_test.cpp, ASubscriberThatLagsPastTheWindowFrontIsToldWhy). Write
    /// timeout: no reason can reach it. Its socket took no bytes for the timeout, and the write
    /// it is stuck in stops mid-event (a piece is 64 KiB of gathered events): after an SSE event
    /// cut short any comment would complete a truncated event with the wrong data (EventSource
    /// discards an unterminated event at the end of the stream, so the close alone loses
    /// nothing), and a WebSocket whose frame was cut cannot send a close frame after it. So
    /// the connection is closed, the let-go counted (`reason="write_timeout"`) and logged
    /// once, at info; the client resumes by Last-Event-ID from the last event it read whole.
    std::chrono::milliseconds write_timeout{30'000};
    /// Scale-out (`--redis`): carries commands for a seat another node owns to that node
    /// (null: they are refused, 409).
    std::shared_ptr<hub::Forwarder> forwarder{};
    /// The agent kinds a seat may be created with here, as `GET /v1/agents` lists them.
    std::vector<AgentKind> agent_kinds{};
    std::string workspace_root; ///< the folder claude seats' `cwd` lies in (`GET /v1/agents`)
    /// Web Push (`/v1/push/…`) and the notifier's figures in /metrics (null: no push routes).
    std::shared_ptr<push::NotifySender> push{};
};

/// The HTTP front of a hub.
///
/// @par Thread safety
/// `start`, `stop`, `port` from any thread. Connections run on their own strands; streams of a
/// seat run on the seat's strand.
class Server {
public:
    /// A server for `hub`, run by `io`'s threads.
    Server(boost::asio::io_context& io, hub::Hub& hub, ServerConfig config);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Binds (or adopts `listen_fd`) and starts accepting. Errors: bad address, port in use, a
    /// descriptor that is not a TCP socket, a public address with no token
    /// (errc::unauthorized), a TLS certificate or key that cannot be loaded.
    boost::system::result<void> start();

    /// The bound port (after `start`).
    [[nodiscard]] std::uint16_t port() const noexcept;

    /// The bound address as a URL host ("127.0.0.1", "[::1]"; after `start`; "" before).
    [[nodiscard]] std::string host() const;

    /// Stops accepting (phase one of shutdown alone). Safe from any thread.
    void stop();

    /// Two-phase shutdown: stops accepting and refuses new work; asks every connection to end
    /// after what is queued (an idle keep-alive connection is closed, a request being answered
    /// is answered with `Connection: close`, an SSE stream is flushed and ends with a comment,
    /// a WebSocket gets a close frame naming the reason); then calls `done` once, on the
    /// io_context, with the connections still open: 0 when all drained, more when `grace`
    /// passed first. The caller stops the io_context from `done`. Safe from any thread.
    void shutdown(std::chrono::milliseconds grace, std::function<void(std::size_t open)> done);

    /// Whether it serves TLS (after a successful `start` with a certificate).
    [[nodiscard]] bool tls() const noexcept;

    /// Connections open now (the gate's count).
    [[nodiscard]] std::size_t connections() const;

    struct Impl; ///< implementation, private to src/server
    /// Runs a command another node forwarded (already authorised there) as this node's API
    /// would, and hands its status and body to `done` (on an arbitrary thread).
    void handle_forwarded(hub::ForwardedRequest fr, hub::ForwardDone done);

private:
    std::shared_ptr<Impl> impl_;
};

} // namespace sluice::server
