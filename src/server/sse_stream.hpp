// An SSE subscription: the writer loop (stream_writer.hpp) with SSE's encoding, owning its
// connection: what a subscriber costs while it idles or is written is that object, its batch and
// the one operation of each kind in flight — no coroutine frames (bench/burst_join.py).
// Generic over the stream (tcp_stream, the TLS stream, test::stream in the failure matrix).
// Included only by http_session_impl.hpp.
#pragma once

#include "stream_writer.hpp"

#include <boost/asio/write.hpp>

#include <array>
#include <concepts>
#include <memory>
#include <span>
#include <string>

namespace sluice::server::stream_detail {

/// SSE on the wire for the writer loop: the response head and `retry`, batches as one gathered
/// text (encode_sse), a comment as heartbeat, a `bye` comment naming why it ends; and a read
/// that only notices the peer going (an SSE client sends nothing worth keeping).
///
/// @par Thread safety
/// Strand-confined, as the StreamWriter that owns it.
template <class Stream>
class SseCodec {
public:
    using Lowest = Stream;
    static constexpr const char* NAME = "SSE";

    explicit SseCodec(Stream stream)
        : stream_(std::move(stream)) {
        if constexpr (std::same_as<Stream, beast::tcp_stream>) {
            // try_write's write must not wait; the asynchronous operations are unaffected.
            boost::system::error_code ec;
            stream_.socket().non_blocking(true, ec);
            non_blocking_ = !ec;
        }
    }

    [[nodiscard]] Lowest& lowest() noexcept { return stream_; }

    /// The response head, then `retry`.
    void head(Outbox& out) {
        out.bufs = {net::buffer(SSE_HEAD), net::buffer(hub::wire::SSE_RETRY)};
        out.end_unit();
    }

    /// Starts the read that notices the peer going.
    template <class Writer>
    void subscribed(std::shared_ptr<Writer> w, const Subscription& /*sub*/) {
        read(std::move(w));
    }

    /// Nothing comes ahead of the batches on an SSE stream.
    static Pending pending(Outbox& /*out*/) { return Pending::none; }

    static Ending pending_close() { return {}; }

    /// The batch as SSE: its heads in one text, frames and pages gathered.
    void encode(const std::vector<hub::OutEvent>& batch, Outbox& out) {
        encode_sse(batch, heads_, out.bufs);
        out.end_unit();
    }

    /// Gives back the heads' text (an idle stream keeps no batch buffers).
    void release() { std::string().swap(heads_); }

    template <class Handler>
    void write_some(std::span<const net::const_buffer> piece, bool /*fin*/, Handler&& h) {
        net::async_write(stream_, piece, std::forward<Handler>(h));
    }

    /// Writes what a plain TCP socket takes now, without waiting (TLS and the tests' streams
    /// have no such write: theirs all go through write_some). `ec` is would_block when it
    /// takes nothing.
    std::size_t try_write(
        std::span<const net::const_buffer> piece,
        boost::system::error_code& ec) requires std::same_as<Stream, beast::tcp_stream> {
        if (!non_blocking_) {
            ec = net::error::would_block;
            return 0;
        }
        return stream_.socket().write_some(piece, ec);
    }

    template <class Handler>
    void heartbeat(Handler&& h) {
        net::async_write(stream_, net::buffer(hub::wire::SSE_HEARTBEAT), std::forward<Handler>(h));
    }

    /// The `bye` comment with the reason (none after an exception).
    template <class Handler>
    void close(const Ending& why, Handler&& h) {
        if (why.error) {
            std::forward<Handler>(h)(boost::system::error_code{}, std::size_t{0});
            return;
        }
        bye_ = hub::wire::sse_comment("bye: " + why.reason);
        net::async_write(stream_, net::buffer(bye_), std::forward<Handler>(h));
    }

private:
    template <class Writer>
    void read(std::shared_ptr<Writer> w) {
        auto strand = w->seat().strand();
        stream_.async_read_some(
            net::buffer(sink_),
            net::bind_executor(strand, [w](boost::system::error_code ec, std::size_t) {
                if (ec) {
                    w->peer_gone();
                    return;
                }
                w->codec().read(w);
            }));
    }

    Stream stream_;
    std::string heads_; // the batch's SSE heads, one text
    std::string bye_;   // the closing comment
    std::array<char, 16> sink_{};
    bool non_blocking_{false}; // the socket is in non-blocking mode (try_write may write)
};

/// An SSE subscriber's stream.
template <class Stream>
using SseStream = StreamWriter<SseCodec<Stream>>;

/// Hands an SSE subscription to `seat` its own SseStream, which owns `stream` and `ticket`
/// from here on; the caller (the HTTP session) ends.
template <class Stream>
void start_sse(
    std::shared_ptr<Server::Impl> s,
    std::shared_ptr<hub::Seat> seat,
    Stream stream,
    SubscribeOptions opt,
    Connections::Ticket ticket) {
    std::make_shared<SseStream<Stream>>(
        std::move(s), std::move(seat), std::move(opt), std::move(ticket), std::move(stream))
        ->start();
}

} // namespace sluice::server::stream_detail
