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
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <deque>
#include <vector>

namespace sluice::server {

namespace stream_detail {

namespace websocket = beast::websocket;

/// Most batches written after a stream was told to end (shutdown or seat closed) before it
/// ends anyway: what was queued goes out, a seat still publishing cannot hold shutdown open.
inline constexpr std::size_t END_DRAIN_BATCHES = 16;

/// Answers to client ops waiting for the writer; a client that floods ops and never reads is
/// dropped when it has this many.
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

/// Why a stream ends, for the SSE comment and the WebSocket close reason.
inline const char* end_reason(const StreamControl& ctl, const hub::Seat& seat) {
    return ctl.stop ? "the server is shutting down" : seat.closed() ? "the seat is closed" : "";
}

/// What a subscriber stream asks of its seat: `connected` or a resume from Last-Event-ID, and
/// whether it is the turn's caller (it cancels the turn when it goes).
struct SubscribeOptions {
    std::optional<std::string> last_event_id; ///< "<epoch>:<seq>", or none
    bool cancel_on_disconnect{false};         ///< SSE `?cancel_on_disconnect=1`
};

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

/// Encodes a batch as SSE into `heads` (owned text) and `bufs` (gathered, frames not copied).
void encode_sse(
    const std::vector<hub::OutEvent>& batch,
    std::vector<std::string>& heads,
    std::vector<net::const_buffer>& bufs);

/// The response head of an SSE stream (the first event, `retry`, follows it).
inline constexpr std::string_view SSE_HEAD = "HTTP/1.1 200 OK\r\n"
                                             "Server: sluice\r\n"
                                             "Content-Type: text/event-stream; charset=utf-8\r\n"
                                             "Cache-Control: no-store\r\n"
                                             "X-Accel-Buffering: no\r\n"
                                             "Connection: keep-alive\r\n"
                                             "\r\n";

template <class Stream>
net::awaitable<void> sse_writer(
    Server::Impl& s, hub::Seat& seat, hub::Subscriber& sub, Stream& stream, StreamControl& ctl) {
    using net::as_tuple;
    using net::use_awaitable;
    const EndOnExit<Stream> end(stream); // the reader sees the end when this writer returns
    std::vector<hub::OutEvent> batch;
    std::vector<std::string> heads;
    std::vector<net::const_buffer> bufs;
    constexpr std::string_view heartbeat = hub::wire::SSE_HEARTBEAT;
    Batches batches;
    for (;;) {
        const bool ending = batches.next(s, seat, sub, ctl, batch);
        if (batch.empty()) {
            if (ending) {
                // Flushed: say why in a comment, then end the stream.
                const std::string bye =
                    hub::wire::sse_comment(std::string("bye: ") + end_reason(ctl, seat));
                (void)co_await net::async_write(stream, net::buffer(bye), as_tuple(use_awaitable));
                co_return;
            }
            // An idle stream keeps no batch buffers; the next batch rebuilds them (one
            // allocation per wake-up; bench/hub_idle_rss.py).
            std::vector<hub::OutEvent>().swap(batch);
            std::vector<std::string>().swap(heads);
            std::vector<net::const_buffer>().swap(bufs);
            auto [woken] = co_await idle_wait(ctl, s.cfg.heartbeat);
            if (co_await cancelled()) {
                co_return; // the reader ended first (the peer went)
            }
            if (!woken) { // the heartbeat interval passed
                auto [wec, n] = co_await net::async_write(
                    stream, net::buffer(heartbeat), as_tuple(use_awaitable));
                if (wec) {
                    co_return;
                }
            }
            continue;
        }
        encode_sse(batch, heads, bufs);
        auto [ec, n] = co_await net::async_write(stream, bufs, as_tuple(use_awaitable));
        if (ec) {
            co_return;
        }
    }
}

// Completes when the peer closes (or sends anything we do not expect on an SSE stream), or
// when the writer shuts the stream down.
template <class Stream>
net::awaitable<void> wait_for_close(Stream& stream) {
    std::array<char, 64> sink{}; // an SSE client sends nothing; this only notices the close
    for (;;) {
        auto [ec, n] =
            co_await stream.async_read_some(net::buffer(sink), net::as_tuple(net::use_awaitable));
        if (ec) {
            co_return;
        }
    }
}

template <class Stream>
net::awaitable<void> sse_on_strand(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    SubscribeOptions opt,
    Connections::Ticket& t) {
    using net::experimental::awaitable_operators::operator||;
    const std::array<net::const_buffer, 2> head{
        net::buffer(SSE_HEAD), net::buffer(hub::wire::SSE_RETRY)};
    auto [ec, n] = co_await net::async_write(stream, head, net::as_tuple(net::use_awaitable));
    if (ec) {
        co_return;
    }
    Subscription sub(seat, co_await net::this_coro::executor, t, std::move(opt));
    co_await (
        sse_writer(s, *seat, sub.subscriber(), stream, sub.control()) || wait_for_close(stream));
    StreamOps<Stream>::shutdown(stream);
}

struct WsState {
    std::deque<std::string> replies; // answers to client ops, at most WS_MAX_REPLIES
};

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
    const EndOnExit<std::remove_reference_t<decltype(beast::get_lowest_layer(ws))>> end(
        beast::get_lowest_layer(ws));
    std::vector<hub::OutEvent> batch;
    Batches batches;
    for (;;) {
        while (!st.replies.empty()) {
            std::string m = std::move(st.replies.front());
            st.replies.pop_front();
            auto [ec, n] = co_await ws.async_write(net::buffer(m), as_tuple(use_awaitable));
            if (ec) {
                co_return;
            }
        }
        const bool ending = batches.next(s, seat, sub, ctl, batch);
        if (batch.empty()) {
            if (ending) {
                const websocket::close_reason why(
                    websocket::close_code::going_away, end_reason(ctl, seat));
                (void)co_await ws.async_close(why, as_tuple(use_awaitable));
                co_return;
            }
            auto [woken] = co_await idle_wait(ctl, s.cfg.heartbeat);
            if (co_await cancelled()) {
                co_return; // the reader ended first (the peer went)
            }
            if (!woken) { // the heartbeat interval passed
                auto [pec] = co_await ws.async_ping({}, as_tuple(use_awaitable));
                if (pec) {
                    co_return;
                }
            }
            continue;
        }
        for (const auto& ev : batch) {
            const std::string m = hub::wire::ws_message(ev);
            auto [ec, n] = co_await ws.async_write(net::buffer(m), as_tuple(use_awaitable));
            if (ec) {
                co_return;
            }
        }
    }
}

template <class Stream>
net::awaitable<void>
ws_reader(hub::Seat& seat, websocket::stream<Stream>& ws, StreamControl& ctl, WsState& st) {
    beast::flat_buffer buf;
    for (;;) {
        buf.clear();
        auto [ec, n] = co_await ws.async_read(buf, net::as_tuple(net::use_awaitable));
        if (ec) {
            co_return;
        }
        if (st.replies.size() >= WS_MAX_REPLIES) {
            co_return; // a client that floods ops and never reads is dropped
        }
        st.replies.push_back(ws_answer(seat, beast::buffers_to_string(buf.data())));
        ctl.wake.cancel();
    }
}

template <class Stream>
net::awaitable<void> ws_on_strand(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    Request req,
    Connections::Ticket& ticket) {
    using net::experimental::awaitable_operators::operator||;
    websocket::stream<Stream> ws(std::move(stream));
    ws.read_message_max(WS_MAX_MESSAGE);
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    auto [aec] = co_await ws.async_accept(req, net::as_tuple(net::use_awaitable));
    if (aec) {
        co_return;
    }
    SubscribeOptions opt;
    if (auto h = req["Last-Event-ID"]; !h.empty()) {
        opt.last_event_id = std::string(h);
    } else if (auto url = boost::urls::parse_origin_form(req.target()); url) {
        opt.last_event_id = query_param(*url, "last_event_id");
    }
    Subscription sub(seat, co_await net::this_coro::executor, ticket, std::move(opt));
    WsState st;
    auto& ctl = sub.control();
    co_await (ws_writer(s, *seat, sub.subscriber(), ws, ctl, st) || ws_reader(*seat, ws, ctl, st));
}

/// The one log line of a stream ended by an exception.
inline void log_stream_exception(const char* what, const hub::Seat& seat, const char* error) {
    spdlog::error("{} stream on seat {} ended by an exception: {}", what, seat.id(), error);
}

} // namespace stream_detail

template <class Stream>
net::awaitable<void> serve_sse(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    std::optional<std::string> last_event_id,
    bool cancel_on_disconnect,
    Connections::Ticket& ticket) {
    // The body runs on the seat's strand; an exception ends the stream with one log line.
    // Spawned from here, with no coroutine between: every frame alive while the stream idles
    // costs each idle subscriber (bench/hub_idle_rss.py).
    auto strand = seat->strand();
    auto keep = seat; // for the log line: the body owns `seat`
    stream_detail::SubscribeOptions opt{std::move(last_event_id), cancel_on_disconnect};
    std::string error;
    try {
        auto body =
            stream_detail::sse_on_strand(s, std::move(seat), stream, std::move(opt), ticket);
        co_await net::co_spawn(strand, std::move(body), net::use_awaitable);
        co_return;
    } catch (const std::exception& e) {
        error = e.what();
    }
    stream_detail::log_stream_exception("SSE", *keep, error.c_str());
}

template <class Stream>
net::awaitable<void> serve_websocket(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    Request req,
    Connections::Ticket& ticket) {
    auto strand = seat->strand();
    auto keep = seat; // for the log line: the body owns `seat`
    std::string error;
    try {
        auto body = stream_detail::ws_on_strand(s, std::move(seat), stream, std::move(req), ticket);
        co_await net::co_spawn(strand, std::move(body), net::use_awaitable);
        co_return;
    } catch (const std::exception& e) {
        error = e.what();
    }
    stream_detail::log_stream_exception("WebSocket", *keep, error.c_str());
}

} // namespace sluice::server
