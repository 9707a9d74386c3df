// A WebSocket subscription: the writer loop (stream_writer.hpp) with WebSocket frames, and the
// reader that takes the client's ops. Generic over the stream (tcp_stream, the TLS stream,
// test::stream in the failure matrix). Included only by http_session_impl.hpp.
#pragma once

#include "stream_writer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sluice::server::stream_detail {

/// The WebSocket on the wire for the writer loop: each event one message (ws_pieces, gathered),
/// the answers to client ops ahead of the next batch in op order, a ping as heartbeat, a close
/// frame with its code and reason at the end.
///
/// @par Thread safety
/// Strand-confined, as the StreamWriter that owns it; the reader (ws_on_strand) runs there too.
template <class Stream>
class WsCodec {
public:
    /// The TCP layer (beneath TLS, when the stream has it).
    using Lowest = std::remove_reference_t<decltype(beast::get_lowest_layer(
        std::declval<websocket::stream<Stream>&>()))>;
    static constexpr const char* NAME = "WebSocket";

    /// Takes `stream` under a WebSocket; `read_only` (a viewer's socket): ops that act are
    /// refused.
    WsCodec(Stream stream, bool read_only)
        : ws_(std::move(stream)) {
        st_.read_only = read_only;
    }

    [[nodiscard]] Lowest& lowest() noexcept { return beast::get_lowest_layer(ws_); }

    /// The WebSocket stream (the reader reads it).
    [[nodiscard]] websocket::stream<Stream>& ws() noexcept { return ws_; }

    /// What the reader and the writer share.
    [[nodiscard]] WsState& state() noexcept { return st_; }

    /// The accept is the head: nothing to write.
    static void head(Outbox& /*out*/) {}

    /// Answers that come later (a page read from the transcript, an owner's) wake the writer
    /// through the subscription's control; the reader is ws_on_strand's.
    template <class Writer>
    void subscribed(const std::shared_ptr<Writer>& /*w*/, const Subscription& sub) {
        st_.ctl = sub.control_ptr();
    }

    /// The answers ready at the front, in op order; or the close the reader asked for.
    Pending pending(Outbox& out) {
        sending_.clear();
        while (!st_.replies.empty() && st_.replies.front()->reply) {
            sending_.push_back(std::move(*st_.replies.front()->reply));
            st_.replies.pop_front();
        }
        if (!sending_.empty()) {
            for (auto& m : sending_) {
                add(m.pieces, out);
                if (m.keep) {
                    out.keep.push_back(std::move(m.keep));
                }
            }
            return Pending::write;
        }
        return st_.close ? Pending::close : Pending::none;
    }

    [[nodiscard]] Ending pending_close() const { return {st_.close->code, st_.close->reason}; }

    /// Each event one message; the page or row is gathered, not copied.
    void encode(const std::vector<hub::OutEvent>& batch, Outbox& out) {
        pieces_.clear();
        pieces_.reserve(batch.size());
        for (const auto& ev : batch) {
            pieces_.push_back(hub::wire::ws_pieces(ev));
        }
        for (const auto& p : pieces_) { // after the vector stopped growing: heads stay put
            add(p, out);
        }
    }

    /// Gives back the messages' heads (an idle stream keeps no batch buffers).
    void release() {
        std::vector<hub::wire::Pieces>().swap(pieces_);
        std::vector<WsReply>().swap(sending_);
    }

    template <class Handler>
    void write_some(std::span<const net::const_buffer> piece, bool fin, Handler&& h) {
        ws_.async_write_some(fin, piece, std::forward<Handler>(h));
    }

    template <class Handler>
    void heartbeat(Handler&& h) {
        ws_.async_ping({}, std::forward<Handler>(h));
    }

    /// The close frame (lagged: 1013 try again later, resume by last_event_id).
    template <class Handler>
    void close(const Ending& why, Handler&& h) {
        ws_.async_close(websocket::close_reason(why.code, why.reason), std::forward<Handler>(h));
    }

private:
    static void add(const hub::wire::Pieces& p, Outbox& out) {
        out.bufs.emplace_back(p.head.data(), p.head.size());
        out.bufs.emplace_back(p.body.data(), p.body.size());
        out.bufs.emplace_back(p.extra.data(), p.extra.size());
        out.bufs.emplace_back(p.tail.data(), p.tail.size());
        out.end_unit();
    }

    websocket::stream<Stream> ws_;
    WsState st_;
    std::vector<hub::wire::Pieces> pieces_; // the batch's messages
    std::vector<WsReply> sending_;          // the answers being written
};

/// A WebSocket subscriber's stream.
template <class Stream>
using WsStream = StreamWriter<WsCodec<Stream>>;

/// Takes the client's ops until the connection ends: each answered into the shared state
/// (ws_take_op), the writer woken to send it. Its end (the peer went) ends the writer.
template <class Stream>
net::awaitable<void> ws_reader(std::shared_ptr<WsStream<Stream>> w) {
    auto& ws = w->codec().ws();
    auto& st = w->codec().state();
    beast::flat_buffer buf;
    for (;;) {
        buf.clear();
        auto [ec, n] = co_await ws.async_read(buf, net::as_tuple(net::use_awaitable));
        if (ec) {
            w->peer_gone();
            co_return;
        }
        if (st.close) {
            continue; // closing: the writer sends the close frame; what comes now is dropped
        }
        const auto data = buf.cdata();
        ws_take_op(
            w->server().counters,
            w->server().cfg.forwarder,
            w->seat(),
            std::string_view(static_cast<const char*>(data.data()), data.size()),
            st);
        w->wake();
    }
}

/// Accepts a WebSocket upgrade and serves the seat's events over it; at shutdown, what is
/// queued is written, then a close frame (going_away) with its reason. `up.leftover`: bytes the
/// client sent after the upgrade request, handed to the WebSocket stream; `up.read_only` (a
/// viewer's socket): ops that act are refused. The stream and `ticket` go to the writer; this
/// coroutine is the reader and ends with it. Runs on the seat's strand (through
/// on_seat_strand).
template <class Stream>
net::awaitable<void> ws_on_strand(
    std::shared_ptr<Server::Impl> s,
    std::shared_ptr<hub::Seat> seat,
    Stream& stream,
    WsUpgrade up,
    Connections::Ticket& ticket) {
    auto w = std::make_shared<WsStream<Stream>>(
        std::move(s), seat, std::move(up.opt), std::move(ticket), std::move(stream), up.read_only);
    auto& ws = w->codec().ws();
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
    w->start(); // on this strand: subscribes at once
    std::string error;
    try {
        co_await ws_reader(w);
        co_return;
    } catch (const std::exception& e) {
        error = e.what();
    }
    // An exception taking an op: one log line, then a close frame saying so.
    spdlog::error("WebSocket on seat {} ended by an exception: {}", seat->id(), error);
    w->codec().state().close = WsClose{websocket::close_code::internal_error, "internal error"};
    w->wake();
}

} // namespace sluice::server::stream_detail
