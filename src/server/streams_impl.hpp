// Subscriber streams, generic over the stream (tcp_stream in the server, test::stream in the
// failure-matrix tests): SSE (EventSource-compatible) and WebSocket, both on the seat's strand.
// Included only by the .cpp files that instantiate them.
#pragma once

#include "impl.hpp"

#include <sluice/hub/wire.hpp>
#include <sluice/server/errors.hpp>
#include <sluice/server/validate.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_prefix.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <deque>
#include <span>
#include <vector>

namespace sluice::server {

namespace stream_detail {

namespace websocket = beast::websocket;

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
struct StreamControl {
    explicit StreamControl(net::any_io_executor ex)
        : wake(std::move(ex)) {}

    net::steady_timer wake; ///< an async condition variable: cancelled to wake the writer
    bool stop{false};       ///< the server is shutting down: write what is queued, then end
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

/// The write deadline (`--write-timeout`) for one write on a stream: a write that makes no
/// progress for that long is cancelled (it fails with operation_aborted, and the stream ends).
/// Its own timer on the stream's strand, not the transport's: Beast's tcp_stream arms its
/// deadline for every operation that starts while it is set, so the stream's pending read (which
/// only waits for the peer to go) was given the write timeout too and a healthy idle subscriber
/// was cut after it, uncounted, before any write could stall.
template <class Stream>
class WriteDeadline {
public:
    WriteDeadline(Server::Impl& s, Stream& stream, const net::any_io_executor& ex)
        : s_(s)
        , timer_(ex)
        , state_(std::make_shared<State>()) {
        timer_.expires_after(s_.cfg.write_timeout);
        timer_.async_wait([st = state_, &stream](const boost::system::error_code& ec) {
            if (ec || st->done) {
                return; // the write ended first (the timer was cancelled, or it raced)
            }
            st->fired = true;
            StreamOps<Stream>::cancel(stream); // the write (and the stream's read) end now
        });
    }

    ~WriteDeadline() {
        state_->done = true;
        timer_.cancel();
    }

    WriteDeadline(const WriteDeadline&) = delete;
    WriteDeadline& operator=(const WriteDeadline&) = delete;

    /// Counts a write that failed because its deadline passed (the subscriber is let go,
    /// reason `write_timeout`) and returns whether it did.
    bool note(const boost::system::error_code& ec) {
        if (ec && state_->fired && !state_->counted) {
            state_->counted = true;
            s_.let_go_write_timeout.fetch_add(1, std::memory_order_relaxed);
            spdlog::info(
                "a subscriber was let go: its writes made no progress for {} ms",
                s_.cfg.write_timeout.count());
            return true;
        }
        return false;
    }

private:
    struct State {
        bool done{false};    ///< the write ended: the timer may no longer touch the stream
        bool fired{false};   ///< the deadline passed and the write was cancelled
        bool counted{false}; ///< counted once
    };

    Server::Impl& s_;
    net::steady_timer timer_;
    std::shared_ptr<State> state_;
};

/// Bytes handed to one write under one deadline: a write is let go when no such piece goes
/// out for the write timeout (no progress), not when a whole large page takes long to a slow
/// but reading client.
inline constexpr std::size_t WRITE_PIECE_BYTES = 64 * 1024;

/// Most buffers handed to one write (an SSE batch is three per event; IOV_MAX is 1,024).
inline constexpr std::size_t WRITE_PIECE_BUFFERS = 64;

/// What a subscriber stream asks of its seat: `connected` or a resume from Last-Event-ID, and
/// whether it is the turn's caller (it cancels the turn when it goes).
/// A stream's hold on its seat: the control (wake-up, stop request), the stop hook in the
/// connection gate, and the subscriber, attached for the life of this object and detached on
/// every exit path. Created and destroyed on the seat's strand.
class Subscription {
public:
    Subscription(
        std::shared_ptr<hub::Seat> seat,
        net::any_io_executor ex,
        Connections::Ticket& ticket,
        SubscribeOptions opt);
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
        Server::Impl& s,
        hub::Seat& seat,
        hub::Subscriber& sub,
        const StreamControl& ctl,
        std::vector<hub::OutEvent>& batch);

private:
    std::size_t end_batches_{};
    std::uint64_t gap_seen_{};
};

/// Ends the transport under a stream when the writer returns, on every path, so the reader's
/// pending read completes whether or not the stream supports per-operation cancellation
/// (test::stream does not).
template <class Stream>
class EndOnExit {
public:
    explicit EndOnExit(Stream& s) noexcept
        : s_(s) {}

    ~EndOnExit() { StreamOps<Stream>::shutdown(s_); }

    EndOnExit(const EndOnExit&) = delete;
    EndOnExit& operator=(const EndOnExit&) = delete;

private:
    Stream& s_;
};

/// Whether this coroutine was cancelled (by `||` when the other side finished first); a
/// cancelled wait and a wake-up (the timer cancelled by the seat) both end with
/// operation_aborted, so the wait's own error cannot tell them apart.
inline net::awaitable<bool> cancelled() {
    const auto state = co_await net::this_coro::cancellation_state;
    co_return state.cancelled() != net::cancellation_type::none;
}

/// Arms the wait for a wake-up (the seat has something, or shutdown) or the heartbeat
/// interval; the writer awaits it itself. Not a coroutine: an idle stream is suspended here,
/// and a frame of its own would cost every idle subscriber (bench/hub_idle_rss.py). The wait
/// ends with operation_aborted when woken, without error at the heartbeat; `cancelled()` then
/// tells a wake-up from the end of the stream.
inline auto idle_wait(StreamControl& ctl, std::chrono::milliseconds heartbeat) {
    ctl.wake.expires_after(heartbeat);
    return ctl.wake.async_wait(net::as_tuple(net::use_awaitable));
}

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

/// Writes one WebSocket message from its pieces, gathered (the body is a shared page or frame),
/// in frames of WRITE_PIECE_BYTES, each under a fresh write deadline (no progress: let go).
template <class Stream>
net::awaitable<boost::system::error_code>
ws_write_pieces(Server::Impl& s, websocket::stream<Stream>& ws, const hub::wire::Pieces& p) {
    using Bufs = std::array<net::const_buffer, 4>;
    const Bufs bufs{
        net::buffer(p.head),
        net::buffer(p.body.data(), p.body.size()),
        net::buffer(p.extra.data(), p.extra.size()),
        net::buffer(p.tail.data(), p.tail.size())};
    using Lowest = std::remove_reference_t<decltype(beast::get_lowest_layer(ws))>;
    const auto ex = co_await net::this_coro::executor;
    beast::buffers_suffix<Bufs> rest(bufs);
    for (;;) {
        const auto left = beast::buffer_bytes(rest);
        const bool fin = left <= WRITE_PIECE_BYTES;
        WriteDeadline<Lowest> deadline(s, beast::get_lowest_layer(ws), ex);
        auto [ec, n] = co_await ws.async_write_some(
            fin, beast::buffers_prefix(WRITE_PIECE_BYTES, rest), net::as_tuple(net::use_awaitable));
        deadline.note(ec);
        if (ec || fin) {
            co_return ec;
        }
        rest.consume(n);
    }
}

template <class Stream>
net::awaitable<void> ws_writer(
    Server::Impl& s,
    hub::Seat& seat,
    hub::Subscriber& sub,
    websocket::stream<Stream>& ws,
    StreamControl& ctl,
    WsState& st) {
    using net::as_tuple;
    using net::use_awaitable;
    using Lowest = std::remove_reference_t<decltype(beast::get_lowest_layer(ws))>;
    auto& lowest = beast::get_lowest_layer(ws);
    const EndOnExit<Lowest> end(lowest);
    const auto ex = co_await net::this_coro::executor;
    std::vector<hub::OutEvent> batch;
    Batches batches;
    for (;;) {
        while (!st.replies.empty() && st.replies.front()->reply) {
            const WsReply m = std::move(*st.replies.front()->reply);
            st.replies.pop_front();
            if (auto ec = co_await ws_write_pieces(s, ws, m.pieces)) {
                co_return;
            }
        }
        if (st.close) {
            const websocket::close_reason why(st.close->code, st.close->reason);
            WriteDeadline<Lowest> deadline(s, lowest, ex); // a close that does not go: let go
            (void)co_await ws.async_close(why, as_tuple(use_awaitable));
            co_return;
        }
        const bool ending = batches.next(s, seat, sub, ctl, batch);
        if (batch.empty()) {
            if (ending) {
                // Let go (lagged: 1013 try again later, resume by last_event_id) or ending.
                const websocket::close_reason why(
                    sub.lagged() ? websocket::close_code::try_again_later
                                 : websocket::close_code::going_away,
                    end_reason(ctl, seat, sub));
                WriteDeadline<Lowest> deadline(s, lowest, ex);
                (void)co_await ws.async_close(why, as_tuple(use_awaitable));
                co_return;
            }
            auto [woken] = co_await idle_wait(ctl, s.cfg.heartbeat);
            if (co_await cancelled()) {
                co_return; // the reader ended first (the peer went)
            }
            if (!woken) { // the heartbeat interval passed
                WriteDeadline<Lowest> deadline(s, lowest, ex);
                auto [pec] = co_await ws.async_ping({}, as_tuple(use_awaitable));
                deadline.note(pec);
                if (pec) {
                    co_return;
                }
            }
            continue;
        }
        for (const auto& ev : batch) {
            const auto m = hub::wire::ws_pieces(ev); // the page or row is gathered, not copied
            if (auto ec = co_await ws_write_pieces(s, ws, m)) {
                co_return;
            }
        }
    }
}

/// Answers one client op into `st`: a reply, an `overloaded` notice when WS_MAX_REPLIES wait
/// (the op is not done), and a close (policy error, with its reason) when the client keeps
/// sending past that; an exception answering ends the connection (internal error, one log
/// line). Never throws.
void ws_take_op(Server::Impl& s, hub::Seat& seat, std::string_view message, WsState& st);

template <class Stream>
net::awaitable<void> ws_reader(
    Server::Impl& s,
    hub::Seat& seat,
    websocket::stream<Stream>& ws,
    StreamControl& ctl,
    WsState& st) {
    beast::flat_buffer buf;
    for (;;) {
        buf.clear();
        auto [ec, n] = co_await ws.async_read(buf, net::as_tuple(net::use_awaitable));
        if (ec) {
            co_return;
        }
        if (st.close) {
            continue; // closing: the writer sends the close frame; what comes now is dropped
        }
        const auto data = buf.cdata();
        ws_take_op(
            s, seat, std::string_view(static_cast<const char*>(data.data()), data.size()), st);
        ctl.wake.cancel();
    }
}

/// The upgrade request in the smallest form Beast accepts, followed by `leftover` (bytes the
/// client sent after the request, read with it): handed to `async_accept` as data already
/// received, so they reach the WebSocket stream. Empty when it does not fit Beast's read
/// buffer (websocket::stream::tcp_frame_size bytes).
std::string ws_handshake_bytes(const Request& req, std::string_view leftover);

/// Accepts a WebSocket upgrade and serves the seat's events over it; at shutdown, what is
/// queued is written, then a close frame (going_away) with its reason. `up.leftover`: bytes the
/// client sent after the upgrade request, handed to the WebSocket stream; `up.read_only` (a
/// viewer's socket): ops that act are refused. Runs on the seat's strand (through
/// on_seat_strand).
template <class Stream>
net::awaitable<void> ws_on_strand(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    WsUpgrade up,
    Connections::Ticket& ticket) {
    using net::experimental::awaitable_operators::operator||;
    websocket::stream<Stream> ws(std::move(stream));
    ws.read_message_max(WS_MAX_MESSAGE);
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    boost::system::error_code aec;
    if (up.leftover.empty()) {
        std::tie(aec) = co_await ws.async_accept(up.req, net::as_tuple(net::use_awaitable));
    } else {
        const std::string raw = ws_handshake_bytes(up.req, up.leftover);
        if (raw.empty()) {
            spdlog::warn(
                "WebSocket on seat {}: {} bytes sent before the handshake answer, refused",
                seat->id(),
                up.leftover.size());
            co_return;
        }
        std::tie(aec) =
            co_await ws.async_accept(net::buffer(raw), net::as_tuple(net::use_awaitable));
    }
    if (aec) {
        co_return;
    }
    SubscribeOptions opt;
    if (auto h = up.req["Last-Event-ID"]; !h.empty()) {
        opt.last_event_id = std::string(h);
    } else if (auto url = boost::urls::parse_origin_form(up.req.target()); url) {
        opt.last_event_id = query_param(*url, "last_event_id");
    }
    Subscription sub(seat, co_await net::this_coro::executor, ticket, std::move(opt));
    WsState st;
    st.read_only = up.read_only;
    st.ctl = sub.control_ptr();
    auto& ctl = sub.control();
    std::string error;
    try {
        co_await (
            ws_writer(s, *seat, sub.subscriber(), ws, ctl, st) || ws_reader(s, *seat, ws, ctl, st));
        co_return;
    } catch (const std::exception& e) {
        error = e.what();
    }
    // An exception in either half: one log line, then a close frame saying so.
    spdlog::error("WebSocket on seat {} ended by an exception: {}", seat->id(), error);
    const websocket::close_reason why(websocket::close_code::internal_error, "internal error");
    (void)co_await ws.async_close(why, net::as_tuple(net::use_awaitable));
}

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
