// An SSE subscription as a chain of completion handlers on the seat's strand, owning its
// connection: what a subscriber costs while it idles or is written is this object, its batch and
// the one operation of each kind in flight — no coroutine frames (bench/burst_join.py).
// Generic over the stream (tcp_stream, the TLS stream, test::stream in the failure matrix).
// Included only by http_session_impl.hpp.
#pragma once

#include "streams_impl.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice::server::stream_detail {

/// One SSE subscriber's connection, from its response head to its end, driven by completion
/// handlers (no coroutine): the head, then batches from the seat (Batches::next) gathered into
/// writes of at most WRITE_PIECE_BYTES, each under the write deadline (`--write-timeout`: no
/// progress → let go, counted), heartbeats while idle, a `bye` comment naming why it ends; a
/// read that only notices the peer going. The object owns the stream and the connection's
/// ticket, so the HTTP session that handed it over ends at once: a subscriber holds this object
/// (a few hundred bytes), its subscriber state, the batch being written and one read, one wait
/// and at most one write in flight. SUBSCRIBER_IDLE_BYTES states the whole bound.
///
/// @par Thread safety
/// Every member runs on the seat's strand (the handlers are bound to it); the stream is touched
/// nowhere else once handed over. The object lives while a handler holds it; its Subscription
/// detaches from the seat in its destructor, on the strand (the last handler runs there).
template <class Stream>
class SseStream : public std::enable_shared_from_this<SseStream<Stream>> {
public:
    /// Takes over `stream` and `ticket` for a subscription to `seat`; `start` begins it.
    SseStream(
        std::shared_ptr<Server::Impl> s,
        std::shared_ptr<hub::Seat> seat,
        Stream stream,
        SubscribeOptions opt,
        Connections::Ticket ticket)
        : s_(std::move(s))
        , seat_(std::move(seat))
        , stream_(std::move(stream))
        , ticket_(std::move(ticket))
        , opt_(std::move(opt))
        , deadline_(seat_->strand()) {}

    SseStream(const SseStream&) = delete;
    SseStream& operator=(const SseStream&) = delete;
    SseStream(SseStream&&) = delete;
    SseStream& operator=(SseStream&&) = delete;
    ~SseStream() = default;

    /// Begins on the seat's strand: the response head, then the subscription.
    void start() {
        net::post(seat_->strand(), [self = this->shared_from_this()] { self->write_head(); });
    }

private:
    using Self = SseStream<Stream>;

    /// Runs `fn` for a handler on the strand; an exception ends the stream with one log line
    /// (a handler must not throw into the io_context's run loop).
    template <class Fn>
    void guarded(Fn&& fn) {
        try {
            fn();
        } catch (const std::exception& e) {
            spdlog::error("SSE stream on seat {} ended by an exception: {}", seat_->id(), e.what());
            end();
        }
    }

    template <class Fn>
    auto on_strand(Fn&& fn) {
        return net::bind_executor(seat_->strand(), std::forward<Fn>(fn));
    }

    void write_head() {
        head_ = {net::buffer(SSE_HEAD), net::buffer(hub::wire::SSE_RETRY)};
        bufs_.assign(head_.begin(), head_.end());
        first_ = 0;
        after_write_ = AfterWrite::subscribe;
        write_piece();
    }

    void subscribe() {
        sub_.emplace(seat_, net::any_io_executor(seat_->strand()), ticket_, std::move(opt_));
        read();
        step();
    }

    // The read only notices the peer going: an SSE client sends nothing worth keeping.
    void read() {
        stream_.async_read_some(
            net::buffer(sink_),
            on_strand([self = this->shared_from_this()](boost::system::error_code ec, std::size_t) {
                if (ec) {
                    self->peer_gone_ = true;
                    if (self->sub_) {
                        self->sub_->control().wake.cancel(); // an idle writer ends now
                    }
                    return;
                }
                self->read();
            }));
    }

    // Takes the next batch and writes it, or waits for a wake-up or the heartbeat.
    void step() {
        if (peer_gone_ || ended_) {
            end();
            return;
        }
        auto& ctl = sub_->control();
        const bool ending = batches_.next(*s_, *seat_, sub_->subscriber(), ctl, batch_);
        if (batch_.empty()) {
            if (ending) {
                // Flushed (or let go): say why in a comment, then end the stream.
                bye_ = hub::wire::sse_comment(
                    std::string("bye: ") + end_reason(ctl, *seat_, sub_->subscriber()));
                bufs_.assign(1, net::buffer(bye_));
                first_ = 0;
                after_write_ = AfterWrite::end;
                write_piece();
                return;
            }
            // An idle stream keeps no batch buffers; the next batch rebuilds them.
            release_batch();
            ctl.wake.expires_after(s_->cfg.heartbeat);
            ctl.wake.async_wait(
                on_strand([self = this->shared_from_this()](boost::system::error_code ec) {
                    self->guarded([&] { self->woken(ec); });
                }));
            return;
        }
        encode_sse(batch_, heads_, bufs_);
        // What the buffers point into is held by `keep_` (frames, pages and partials, shared;
        // an event's own data is copied into `heads_` by sse_append); the events themselves (an
        // owned id each) go now, not after the write.
        keep_.clear();
        keep_.reserve(batch_.size());
        for (auto& ev : batch_) {
            if (ev.frame) {
                keep_.push_back(std::move(ev.frame));
            }
            if (ev.shared) {
                keep_.push_back(std::move(ev.shared));
            }
            if (ev.partial) {
                keep_.push_back(std::move(ev.partial));
            }
        }
        std::vector<hub::OutEvent>().swap(batch_);
        first_ = 0;
        after_write_ = AfterWrite::step;
        write_piece();
    }

    // The wait ended: woken (operation_aborted) or the heartbeat interval passed.
    void woken(boost::system::error_code ec) {
        if (peer_gone_) {
            end();
            return;
        }
        if (!ec) {
            bufs_.assign(1, net::buffer(hub::wire::SSE_HEARTBEAT));
            first_ = 0;
            after_write_ = AfterWrite::step;
            write_piece();
            return;
        }
        step();
    }

    void release_batch() {
        std::vector<hub::OutEvent>().swap(batch_);
        std::string().swap(heads_);
        std::vector<net::const_buffer>().swap(bufs_);
        std::vector<std::shared_ptr<const void>>().swap(keep_);
    }

    // Writes bufs_[first_…] in pieces of at most WRITE_PIECE_BYTES and WRITE_PIECE_BUFFERS
    // buffers, each under a fresh write deadline. The piece is a span over bufs_ itself: its
    // first buffer advanced past what was written, its last one cut to the piece (and put
    // back after the write), so the buffer list is never copied.
    void write_piece() {
        while (first_ < bufs_.size() && bufs_[first_].size() == 0) {
            ++first_;
        }
        if (first_ == bufs_.size()) {
            written();
            return;
        }
        std::size_t last = first_;
        std::size_t bytes = 0;
        cut_.reset();
        for (; last < bufs_.size() && last - first_ < WRITE_PIECE_BUFFERS
               && bytes < WRITE_PIECE_BYTES;
             ++last) {
            if (bufs_[last].size() > WRITE_PIECE_BYTES - bytes) {
                cut_ = Cut{last, bufs_[last]};
                bufs_[last] = net::buffer(bufs_[last].data(), WRITE_PIECE_BYTES - bytes);
            }
            bytes += bufs_[last].size();
        }
        const std::span<const net::const_buffer> piece(bufs_.data() + first_, last - first_);
        arm_deadline();
        net::async_write(
            stream_,
            piece,
            on_strand(
                [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) {
                    self->guarded([&] { self->piece_written(ec, n); });
                }));
    }

    void piece_written(boost::system::error_code ec, std::size_t n) {
        writing_ = false;
        deadline_.cancel();
        if (cut_) {
            bufs_[cut_->index] = cut_->whole; // the cut buffer back whole, then advanced below
            cut_.reset();
        }
        if (ec) {
            if (timed_out_) {
                s_->let_go_write_timeout.fetch_add(1, std::memory_order_relaxed);
                spdlog::info(
                    "a subscriber was let go: its writes made no progress for {} ms",
                    s_->cfg.write_timeout.count());
            }
            end();
            return;
        }
        while (n > 0) {
            const std::size_t size = bufs_[first_].size();
            if (n < size) {
                bufs_[first_] += n;
                break;
            }
            n -= size;
            ++first_;
        }
        write_piece();
    }

    // Every piece of the current write is out.
    void written() {
        switch (after_write_) {
        case AfterWrite::subscribe:
            bufs_.clear();
            subscribe();
            return;
        case AfterWrite::step:
            keep_.clear();
            step();
            return;
        case AfterWrite::end:
            end();
            return;
        }
    }

    // One write deadline per piece, on one timer: a write that makes no progress for the write
    // timeout is cancelled (its stream ends). `generation_` tells a stale expiry (one that
    // raced a finished piece) from the current one.
    void arm_deadline() {
        writing_ = true;
        const std::uint64_t gen = ++generation_;
        deadline_.expires_after(s_->cfg.write_timeout);
        deadline_.async_wait(
            on_strand([self = this->shared_from_this(), gen](boost::system::error_code ec) {
                if (ec || !self->writing_ || gen != self->generation_) {
                    return;
                }
                self->timed_out_ = true;
                StreamOps<Stream>::cancel(self->stream_);
            }));
    }

    // Ends the connection both ways (the pending read completes); the object goes with the
    // last handler that holds it, and its subscription detaches then.
    void end() {
        if (ended_) {
            return;
        }
        ended_ = true;
        deadline_.cancel();
        if (sub_) {
            sub_->control().wake.cancel();
        }
        StreamOps<Stream>::shutdown(stream_);
    }

    enum class AfterWrite : std::uint8_t { subscribe, step, end };

    struct Cut {
        std::size_t index{};     // the buffer cut to fit the piece
        net::const_buffer whole; // as it was before the cut
    };

    std::shared_ptr<Server::Impl> s_;
    std::shared_ptr<hub::Seat> seat_;
    Stream stream_;
    Connections::Ticket ticket_;
    SubscribeOptions opt_;                          // until the subscription starts
    std::optional<Subscription> sub_;               // from after the head on
    net::steady_timer deadline_;                    // the write deadline of the piece in flight
    std::vector<hub::OutEvent> batch_;              // while a batch is taken and encoded
    std::string heads_;                             // the batch's SSE heads, one text
    std::vector<net::const_buffer> bufs_;           // what is being written, gathered
    std::vector<std::shared_ptr<const void>> keep_; // what bufs_ points into, while written
    std::string bye_;                               // the closing comment
    std::array<net::const_buffer, 2> head_;         // the response head and `retry`
    std::optional<Cut> cut_;
    Batches batches_;
    std::array<char, 16> sink_{};
    std::uint64_t generation_{};
    std::size_t first_{};
    AfterWrite after_write_{AfterWrite::step};
    bool writing_{false};
    bool timed_out_{false};
    bool peer_gone_{false};
    bool ended_{false};
};

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
        std::move(s), std::move(seat), std::move(stream), std::move(opt), std::move(ticket))
        ->start();
}

} // namespace sluice::server::stream_detail
