// Subscriber streams, generic over the stream (tcp_stream in the server, test::stream in the
// failure-matrix tests): what SSE (EventSource-compatible) and WebSocket share, both on the
// seat's strand; their writer loop is stream_writer.hpp.
#pragma once

#include "impl.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/hub/wire.hpp>
#include <sluice/server/errors.hpp>
#include <sluice/server/validate.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/url/url_view.hpp>

#include <spdlog/spdlog.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sluice::server {

namespace stream_detail {

/// Most batches written after a stream was told to end (shutdown or seat closed) before it
/// ends anyway: what was queued goes out, a seat still publishing cannot hold shutdown open.
inline constexpr std::size_t END_DRAIN_BATCHES = 16;

/// Answers to client ops waiting for the writer. Past this an op is answered `overloaded` (not
/// done); a client that sends WS_MAX_REPLIES more ops while none has room is closed (policy
/// error, with the reason). Basis: an op is answered in microseconds, so 16 waiting means the
/// writer is blocked on the client's own socket (a mirror's op forwarded to its owner waits a
/// Redis round trip, bounded by the forwarder's timeout).
inline constexpr std::size_t WS_MAX_REPLIES = 16;

/// Largest WebSocket message a client may send (an op is a few hundred bytes).
inline constexpr std::size_t WS_MAX_MESSAGE = 64 * 1024;

/// A stream's wake-up and stop request. Confined to the seat's strand.
///
/// The wake-up is a call, not a timer to cancel: a frame wakes every idle subscriber of its
/// seat, and a timer's cancel goes through the io_context's queue (its lock, a wake of another
/// I/O thread, then a hop back onto the seat's strand) for each of them. The writer's wake-up
/// queues its next step on the strand it is already on.
struct StreamControl {
    std::function<void()> on_wake; ///< set by the writer while it runs
    bool stop{false};              ///< the server is shutting down: write what is queued, then end

    /// Wakes the writer if it waits (nothing when it is busy: it looks again when done).
    void wake() const {
        if (on_wake) {
            on_wake();
        }
    }
};

/// The reason a lagging subscriber is let go (its SSE comment / WebSocket close reason).
inline constexpr const char* LAGGED_REASON =
    "lagged behind the window front; reconnect with Last-Event-ID";

/// Why a stream ends, for the SSE comment and the WebSocket close reason.
inline const char*
end_reason(const StreamControl& ctl, const hub::Seat& seat, const hub::Subscriber& sub) {
    if (ctl.stop) {
        return "the server is shutting down";
    }
    if (seat.closed()) {
        return "the seat is closed";
    }
    return sub.lagged() ? LAGGED_REASON : "";
}

/// Bytes handed to one write under one deadline: a write is let go when no such piece goes
/// out for the write timeout (no progress), not when a whole large page takes long to a slow
/// but reading client.
inline constexpr std::size_t WRITE_PIECE_BYTES = 64 * 1024;

/// Most buffers handed to one write (an SSE batch is three per event; IOV_MAX is 1,024).
inline constexpr std::size_t WRITE_PIECE_BUFFERS = 64;

/// Where a subscriber resumes: the `Last-Event-ID` header, else the `last_event_id` query
/// parameter (a browser's WebSocket cannot send a header). The one place either is read, for
/// SSE and WebSocket alike.
std::optional<std::string> last_event_id(const Request& req, const boost::urls::url_view& url);

/// A stream's hold on its seat: the control (wake-up, stop request), the stop hook in the
/// connection gate, and the subscriber, attached for the life of this object and detached on
/// every exit path. Created and destroyed on the seat's strand.
class Subscription {
public:
    Subscription(
        std::shared_ptr<hub::Seat> seat,
        Connections::Ticket& ticket,
        SubscribeOptions opt,
        std::function<void()> on_wake);
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    /// The stream's wake-up and stop request.
    [[nodiscard]] StreamControl& control() noexcept { return *ctl_; }

    /// The same, weakly: for answers that come after the stream may have gone.
    [[nodiscard]] std::weak_ptr<StreamControl> control_ptr() const noexcept { return ctl_; }

    /// The attached subscriber.
    [[nodiscard]] hub::Subscriber& subscriber() noexcept { return *sub_; }

private:
    std::shared_ptr<hub::Seat> seat_;
    std::shared_ptr<StreamControl> ctl_; // shared: the stop hook holds it weakly
    std::shared_ptr<hub::Subscriber> sub_;
};

/// Where a writer takes its batches from: the seat's `collect` while the stream runs; once it
/// is ending, what is queued (at most END_DRAIN_BATCHES more), then nothing. Notes the lane's
/// figures for /v1/stats after each collect. Confined to the seat's strand.
class Batches {
public:
    /// Fills `batch` (cleared first). Returns whether the stream is ending: an empty batch
    /// then means everything queued is out and the stream ends now.
    bool next(
        Counters& counters,
        hub::Seat& seat,
        hub::Subscriber& sub,
        const StreamControl& ctl,
        std::vector<hub::OutEvent>& batch);

private:
    std::size_t end_batches_{};
    std::uint64_t gap_seen_{};
};

/// Encodes a batch as SSE into `heads` (the batch's heads, one owned text) and `bufs`
/// (gathered: frames and pages are not copied).
void encode_sse(
    const std::vector<hub::OutEvent>& batch,
    std::string& heads,
    std::vector<net::const_buffer>& bufs);

/// The response head of an SSE stream (the first event, `retry`, follows it).
inline constexpr std::string_view SSE_HEAD = "HTTP/1.1 200 OK\r\n"
                                             "Server: sluice\r\n"
                                             "Content-Type: text/event-stream; charset=utf-8\r\n"
                                             "Cache-Control: no-store\r\n"
                                             "X-Accel-Buffering: no\r\n"
                                             "Connection: keep-alive\r\n"
                                             "\r\n";

/// The WebSocket close code and reason for a stream that ends (`code` unset: none to send).
struct WsClose {
    websocket::close_code code{websocket::close_code::normal};
    std::string reason;
};

/// An answer's place among the replies: empty until the answer is known (a `more` page read
/// on the writer fills it later).
struct WsSlot {
    std::optional<WsReply> reply;
};

/// What the two halves of a WebSocket stream share (on the seat's strand).
struct WsState {
    std::deque<std::shared_ptr<WsSlot>> replies; // answers in op order: at most WS_MAX_REPLIES
                                                 // (+ 1 notice); sent as they are filled
    std::weak_ptr<StreamControl> ctl;            // wakes the writer when a later answer comes
    std::size_t refused{};                       // ops refused as overloaded since there was room
    std::optional<WsClose> close;                // set by the reader: the writer closes with it
    bool read_only{false}; // a viewer's connection: every op but `more` is refused
};

/// Answers one client op into `st`: a reply, an `overloaded` notice when WS_MAX_REPLIES wait
/// (the op is not done), and a close (policy error, with its reason) when the client keeps
/// sending past that; an exception answering ends the connection (internal error, one log
/// line). Never throws.
/// `forwarder`: where a mirror's ops go (ws_answer).
void ws_take_op(
    Counters& counters,
    const std::shared_ptr<hub::Forwarder>& forwarder,
    hub::Seat& seat,
    std::string_view message,
    WsState& st);

/// The upgrade request in the smallest form Beast accepts, followed by `leftover` (bytes the
/// client sent after the request, read with it): handed to `async_accept` as data already
/// received, so they reach the WebSocket stream. Empty when it does not fit Beast's read
/// buffer (websocket::stream::tcp_frame_size bytes).
std::string ws_handshake_bytes(const Request& req, std::string_view leftover);

/// Runs a stream's body on the seat's strand; an exception ends the stream with one log line.
/// The only coroutine between the HTTP session and the body: every frame alive while a stream
/// idles costs each idle subscriber (bench/hub_idle_rss.py).
template <class Body>
net::awaitable<void> on_seat_strand(std::shared_ptr<hub::Seat> seat, const char* what, Body body) {
    auto strand = seat->strand();
    std::string error;
    try {
        co_await net::co_spawn(strand, std::move(body), net::use_awaitable);
        co_return;
    } catch (const std::exception& e) {
        error = e.what();
    }
    spdlog::error("{} stream on seat {} ended by an exception: {}", what, seat->id(), error);
}

} // namespace stream_detail

} // namespace sluice::server
