// Test support: start the real `sluice` binary, and talk to it over real HTTP and SSE.
#pragma once

#include "unit/conversation/fixtures.hpp"

#include <sluice/net/http_client.hpp>
#include <sluice/net/sse.hpp>

#include <boost/json/value.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sluice::test {

/// Temporary directories come from the conversation tests' support (one helper, not two).
using sluice::test::TempDir;

/// How a `serve` started by SluiceProcess treats tokens.
enum class HubAuth {
    /// `--no-token` is added unless the args name `--token` or `--no-token`: tests that are not
    /// about tokens talk to the hub as they always did (every helper here, raw sockets and
    /// WebSocket handshakes included).
    no_token,
    /// As given: the hub's default (a token created in its data dir, found by the CLI there).
    as_given,
};

/// A child process running the sluice binary; stdout is read for `listening on …`.
/// The destructor ends it (SIGTERM, then SIGKILL) and reaps it.
class SluiceProcess {
public:
    /// Starts `sluice <args…>` (in `cwd` when given); for `serve`, waits (up to 20 s) for the
    /// listening line.
    /// @param nofile when set, the child runs with RLIMIT_NOFILE (soft and hard) at this value
    ///   (started through prlimit(1), which execs it: the pid is sluice's).
    explicit SluiceProcess(
        std::vector<std::string> args,
        bool wait_for_listen = true,
        HubAuth auth = HubAuth::no_token,
        const std::string& cwd = {},
        std::optional<unsigned> nofile = std::nullopt);
    /// As above, without a token (`--no-token`), with RLIMIT_NOFILE at `nofile`.
    SluiceProcess(
        std::vector<std::string> args, bool wait_for_listen, std::optional<unsigned> nofile);
    ~SluiceProcess();
    SluiceProcess(const SluiceProcess&) = delete;
    SluiceProcess& operator=(const SluiceProcess&) = delete;

    /// The port `serve` bound.
    [[nodiscard]] unsigned port() const noexcept { return port_; }

    /// "http://127.0.0.1:<port>" ("https://…" when the hub serves TLS).
    [[nodiscard]] std::string base() const;

    /// The token in the page link the hub printed (`page: …#token=<token>`), or "".
    [[nodiscard]] std::string token() const;

    /// The child's pid.
    [[nodiscard]] int pid() const noexcept { return pid_; }

    /// Sends SIGTERM and waits for the exit (up to `timeout`); returns the exit status or -1.
    int terminate(std::chrono::milliseconds timeout = std::chrono::seconds(10));
    /// Waits for the exit; returns the exit status (or 128+signal), -1 on timeout.
    int wait(std::chrono::milliseconds timeout);
    /// Everything the child wrote to stdout so far.
    [[nodiscard]] std::string output() const;

private:
    void reader();
    int pid_{-1};
    int out_fd_{-1};
    unsigned port_{};
    bool tls_{false};
    std::thread reader_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::string out_;
    bool exited_{false};
    int status_{-1};
};

/// A plain HTTP response for tests.
struct Reply {
    unsigned status{};
    std::string body;
    boost::json::value json;        ///< parsed body (null when not JSON)
    transport::HttpHeaders headers; ///< response headers

    /// The value of header `name` (case-insensitive), or "" when absent.
    [[nodiscard]] std::string header(std::string_view name) const;
};

/// One request to the hub (no retries, 10 s timeouts).
Reply http(
    const std::string& method,
    const std::string& url,
    const std::string& body = {},
    transport::HttpHeaders headers = {});

/// `serve --listen 127.0.0.1:0 --data <dir> --pace 0` followed by `extra`: a test's hub.
std::vector<std::string> hub_args(const TempDir& dir, std::vector<std::string> extra = {});

/// An executable `claude` in `dir` running the stand-in tests/support/fake_agent.py with `flags`
/// and the flags sluice passes (for `--claude-bin`); its path.
std::string fake_claude(const TempDir& dir, const std::string& flags = {});

/// `Authorization: Bearer <token>`.
transport::HttpHeaders bearer(const std::string& token);

/// A raw client socket connected to 127.0.0.1:`port` (with SO_RCVBUF `rcvbuf` when non-zero),
/// for requests an HTTP library would refuse to send; -1 when the connect fails.
int connect_raw(unsigned port, int rcvbuf = 0);

/// What `new_seat` asks for.
struct NewSeat {
    std::string name{"t"}; ///< the seat's name
    std::string agent;     ///< `"agent"` when not empty (else the hub's default)
    std::string token;     ///< sent as a bearer token when not empty
};

/// Creates a seat (`POST /v1/seats`); expects 201 and returns its id ("" on any other status).
std::string new_seat(const SluiceProcess& hub, const NewSeat& seat = {});

/// Sends a prompt (`POST /v1/seats/{seat}/messages`); expects 202 and returns its turn (0 on
/// any other status).
std::uint64_t send(const SluiceProcess& hub, const std::string& seat, const std::string& text);

/// Sends `request` as it is (raw bytes, for headers an HTTP library sets itself, such as Host)
/// to 127.0.0.1:`port` and returns everything read until the peer closes or `timeout`.
std::string raw_http(
    unsigned port,
    const std::string& request,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));

/// An SSE subscriber on its own thread, collecting events until stopped.
class SseClient {
public:
    /// Connects to `url` (with an optional Last-Event-ID) and starts reading.
    explicit SseClient(std::string url, std::optional<std::string> last_event_id = std::nullopt);
    /// Stops reading and joins.
    ~SseClient();
    SseClient(const SseClient&) = delete;
    SseClient& operator=(const SseClient&) = delete;

    /// Waits until `pred(events)` holds (checked at every event) or `timeout`; returns whether it
    /// held.
    bool wait_for(
        const std::function<bool(const std::vector<sse::Event>&)>& pred,
        std::chrono::milliseconds timeout = std::chrono::seconds(20));
    /// A copy of the events so far.
    [[nodiscard]] std::vector<sse::Event> events() const;
    /// Stops reading (the connection is closed).
    void stop();

private:
    CancellationToken cancel_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<sse::Event> events_;
    bool done_{false};
    std::thread thread_;
};

/// Frames of type `frame` in `events`, as (seq, row).
std::vector<std::pair<std::int64_t, boost::json::value>>
frames_of(const std::vector<sse::Event>& events);

/// Whether `events` holds a `turn` event with state `state` for `turn`.
bool has_turn_state(
    const std::vector<sse::Event>& events, std::uint64_t turn, std::string_view state);

/// Sends `text` to `seat` and returns the frames a subscriber (joined before it) saw until the
/// turn ended or failed, and then until `also` holds (up to 5 s) when given; empty when the turn
/// did not end within 20 s.
std::vector<boost::json::value> turn_frames(
    const SluiceProcess& hub,
    const std::string& seat,
    const std::string& text,
    const std::function<bool(const std::vector<sse::Event>&)>& also = {});

} // namespace sluice::test
