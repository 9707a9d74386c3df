// The one writer loop of a subscriber's stream, shared by SSE and WebSocket: batches from the
// seat, heartbeats while idle, the end with its reason, every write under one write deadline.
// What differs per transport (the encoding, a write, a heartbeat, the closing words) is its
// Codec (sse_stream.hpp, ws_stream.hpp). Included only by those two headers.
#pragma once

#include "streams_impl.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sluice::server::stream_detail {

/// What a stream is about to write: gathered buffers cut into units (an SSE batch is one unit;
/// a WebSocket message is one unit, its last frame marked final), and what they point into.
struct Outbox {
    std::vector<net::const_buffer> bufs;           ///< gathered, not copied
    std::vector<std::size_t> ends;                 ///< unit i ends before bufs[ends[i]]
    std::vector<std::shared_ptr<const void>> keep; ///< what bufs points into, while written

    /// Ends the current unit at the last buffer added.
    void end_unit() { ends.push_back(bufs.size()); }

    void clear() {
        bufs.clear();
        ends.clear();
        keep.clear();
    }

    /// Gives the memory back (an idle stream keeps no batch buffers).
    void release() {
        std::vector<net::const_buffer>().swap(bufs);
        std::vector<std::size_t>().swap(ends);
        std::vector<std::shared_ptr<const void>>().swap(keep);
    }
};

/// Moves what a batch's buffers point into (frames, pages, partials; shared) to `keep`; the
/// events themselves (an owned id each) can go now, not after the write.
inline void keep_batch(std::vector<hub::OutEvent>& batch, Outbox& out) {
    out.keep.reserve(out.keep.size() + batch.size());
    for (auto& ev : batch) {
        if (ev.frame) {
            out.keep.push_back(std::move(ev.frame));
        }
        if (ev.shared) {
            out.keep.push_back(std::move(ev.shared));
        }
        if (ev.partial) {
            out.keep.push_back(std::move(ev.partial));
        }
    }
}

/// How a stream ends: the reason its closing words name, and (WebSocket) the close code.
struct Ending {
    websocket::close_code code{websocket::close_code::going_away};
    std::string reason;
    bool error{false}; ///< ended by an exception: no closing words but "internal error"
};

/// What a codec has queued ahead of the next batch (a WebSocket's answers to client ops).
enum class Pending : std::uint8_t { none, write, close };

/// The writer loop of one subscriber's stream, as a chain of completion handlers on the seat's
/// strand (no coroutine frame: what an idle subscriber costs is this object and its one wait;
/// bench/burst_join.py, bench/hub_idle_rss.py). In order: the codec's head, the subscription,
/// then — until the end — what the codec has pending, the next batch (Batches::next), or a wait
/// for a wake-up or the heartbeat; at the end the codec's closing words and a shutdown both
/// ways. Every write goes out in pieces of at most WRITE_PIECE_BYTES and WRITE_PIECE_BUFFERS
/// buffers, and every piece, heartbeat and close is under the one write deadline
/// (`--write-timeout`): no progress for that long → the transport is cancelled, the subscriber
/// let go and counted once.
///
/// `Codec` gives: `Lowest` and `lowest()` (the TCP layer, for the deadline and the shutdown);
/// `NAME`; `head(Outbox&)`; `subscribed(self, sub)` (start a reader, when the codec owns one);
/// `pending(Outbox&)` and `pending_close()`; `encode(batch, Outbox&)`; `write_some(piece,
/// fin, h)`, `heartbeat(h)`, `close(const Ending&, h)` with `h(error_code[, size_t])`.
///
/// @par Thread safety
/// Every member runs on the seat's strand (the handlers are bound to it), but `flush_now`: a
/// FlushGroup runs it on any I/O thread while the writer waits for `flushed` (neither idle nor
/// writing), and it touches only the outbox and the socket's send side. The object lives while a
/// handler (or a codec's reader) holds it; its Subscription detaches from the seat in its
/// destructor, on the strand.
template <class Codec>
class StreamWriter final : public std::enable_shared_from_this<StreamWriter<Codec>>,
                           public Flushable {
public:
    /// Takes over the connection's `ticket` for a subscription to `seat`; `codec_args` build
    /// the codec (which owns the stream). `start` begins it.
    template <class... CodecArgs>
    StreamWriter(
        std::shared_ptr<Server::Impl> s,
        std::shared_ptr<hub::Seat> seat,
        SubscribeOptions opt,
        Connections::Ticket ticket,
        CodecArgs&&... codec_args)
        : s_(std::move(s))
        , seat_(std::move(seat))
        , codec_(std::forward<CodecArgs>(codec_args)...)
        , ticket_(std::move(ticket))
        , opt_(std::move(opt))
        , deadline_(seat_->strand())
        , heartbeat_(seat_->strand()) {}

    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;
    StreamWriter(StreamWriter&&) = delete;
    StreamWriter& operator=(StreamWriter&&) = delete;
    ~StreamWriter() = default;

    /// The transport's codec (and through it the stream).
    [[nodiscard]] Codec& codec() noexcept { return codec_; }

    /// The seat streamed.
    [[nodiscard]] hub::Seat& seat() const noexcept { return *seat_; }

    /// The server's state.
    [[nodiscard]] Server::Impl& server() const noexcept { return *s_; }

    /// Begins, on the seat's strand: the codec's head, then the subscription and the loop.
    void start() {
        net::dispatch(seat_->strand(), [self = this->shared_from_this()] {
            self->guarded([&] { self->write_head(); });
        });
    }

    /// Wakes an idle writer (the seat has something new, the codec has something pending, the
    /// stream is to end): its next step is queued on the strand, which the caller is on (a
    /// seat's append wakes all its idle writers in one pass, each a push onto the strand's own
    /// queue). Nothing when it is busy: it looks again when its write is done.
    void wake() {
        if (!idle_) {
            return;
        }
        idle_ = false;
        net::post(seat_->strand(), [self = this->shared_from_this()] {
            self->guarded([&] { self->step(); });
        });
    }

    /// The peer went (a reader saw its read fail): the stream ends now. On the strand.
    void peer_gone() {
        peer_gone_ = true;
        StreamOps<typename Codec::Lowest>::shutdown(codec_.lowest()); // a write in flight fails
        wake();
    }

private:
    /// Runs `fn` for a handler on the strand; an exception ends the stream with one log line
    /// (a handler must not throw into the io_context's run loop) and, where the codec has
    /// them, closing words saying so.
    template <class Fn>
    void guarded(Fn&& fn) {
        try {
            fn();
        } catch (const std::exception& e) {
            spdlog::error(
                "{} stream on seat {} ended by an exception: {}",
                Codec::NAME,
                seat_->id(),
                e.what());
            if (closing_) {
                end();
                return;
            }
            finish(Ending{websocket::close_code::internal_error, "internal error", true});
        }
    }

    template <class Fn>
    auto on_strand(Fn&& fn) {
        return net::bind_executor(seat_->strand(), std::forward<Fn>(fn));
    }

    enum class After : std::uint8_t { subscribe, step };

    // Whether the codec writes at once where its socket takes it (write_out, flush_now).
    static constexpr bool TRY_WRITE = requires(
        Codec & c, std::span<const net::const_buffer> piece, boost::system::error_code& ec) {
        { c.try_write(piece, ec) } -> std::same_as<std::size_t>;
    };

    void write_head() {
        out_.clear();
        codec_.head(out_);
        if (write_out(After::subscribe)) {
            subscribe();
        }
    }

    void subscribe() {
        sub_.emplace(seat_, ticket_, std::move(opt_), [weak = this->weak_from_this()] {
            if (auto self = weak.lock()) {
                self->wake();
            }
        });
        codec_.subscribed(this->shared_from_this(), *sub_);
        if constexpr (TRY_WRITE) {
            group_ = s_->flush_groups.of(*seat_);
        }
        step();
    }

    // What the codec has pending, else the next batch, else a wait for a wake-up or the
    // heartbeat. Loops while its writes go out at once (no completion to come back through).
    void step() {
        for (;;) {
            if (peer_gone_ || ended_) {
                end();
                return;
            }
            out_.clear();
            switch (codec_.pending(out_)) {
            case Pending::write:
                if (!write_out(After::step)) {
                    return;
                }
                continue;
            case Pending::close:
                finish(codec_.pending_close());
                return;
            case Pending::none:
                break;
            }
            auto& ctl = sub_->control();
            const bool ending =
                batches_.next(s_->counters, *seat_, sub_->subscriber(), ctl, batch_);
            if (batch_.empty()) {
                if (ending) {
                    // Flushed (or let go): say why, then end the stream. A lagging subscriber
                    // is told to try again later (and resumes by Last-Event-ID).
                    finish(Ending{
                        sub_->subscriber().lagged() ? websocket::close_code::try_again_later
                                                    : websocket::close_code::going_away,
                        end_reason(ctl, *seat_, sub_->subscriber())});
                    return;
                }
                // An idle stream keeps no batch buffers; the next batch rebuilds them.
                std::vector<hub::OutEvent>().swap(batch_);
                out_.release();
                codec_.release();
                go_idle();
                return;
            }
            published_ = oldest_published(batch_);
            codec_.encode(batch_, out_);
            keep_batch(batch_, out_);
            std::vector<hub::OutEvent>().swap(batch_);
            if (!write_out(After::step)) {
                return;
            }
        }
    }

    // Waits for a wake-up (wake) or the heartbeat. The heartbeat's timer is armed lazily, as
    // the write deadline is: armed when the stream starts waiting and it is not armed already;
    // on expiry it checks whether the stream still waits and since when, and waits again for
    // the rest of the interval when the wait is younger. So a frame delivered touches no
    // timer (a timer per wait cost a heap update and, to wake it, a cancel through the
    // io_context's queue for every frame and viewer). While it waits, that timer's handler
    // holds the stream.
    void go_idle() {
        idle_ = true;
        idle_since_ = std::chrono::steady_clock::now();
        if (!heartbeat_armed_) {
            wait_heartbeat(s_->cfg.heartbeat);
        }
    }

    void wait_heartbeat(std::chrono::steady_clock::duration d) {
        heartbeat_armed_ = true;
        heartbeat_.expires_after(d);
        heartbeat_.async_wait(
            on_strand([self = this->shared_from_this()](boost::system::error_code ec) {
                self->guarded([&] { self->heartbeat_due(ec); });
            }));
    }

    // The heartbeat's timer expired (or was cancelled: the stream ended).
    void heartbeat_due(boost::system::error_code ec) {
        heartbeat_armed_ = false;
        if (ec || ended_ || !idle_) {
            return; // ended, or busy: the next wait arms it again
        }
        const auto waited = std::chrono::steady_clock::now() - idle_since_;
        if (waited < s_->cfg.heartbeat) {
            wait_heartbeat(s_->cfg.heartbeat - waited);
            return;
        }
        idle_ = false;
        if (peer_gone_) {
            end();
            return;
        }
        arm_deadline();
        codec_.heartbeat(
            on_strand([self = this->shared_from_this()](boost::system::error_code hec, auto&&...) {
                self->guarded([&] {
                    if (self->disarm(hec)) {
                        self->step();
                    }
                });
            }));
    }

    // The closing words (once), then the end.
    void finish(const Ending& why) {
        if (closing_ || ended_ || peer_gone_) {
            end();
            return;
        }
        closing_ = true;
        arm_deadline();
        codec_.close(
            why,
            on_strand([self = this->shared_from_this()](boost::system::error_code ec, auto&&...) {
                self->disarm(ec);
                self->end();
            }));
    }

    // Writes the outbox. Returns true when all of it went out at once (the caller goes on);
    // false when a write is in flight or queued (its end goes on: `after_`) or failed (the
    // stream ends). A codec with a `try_write` (a plain TCP socket) hands the outbox to its
    // seat's FlushGroup once subscribed: written where the socket takes it at once, by whichever
    // I/O thread, with every other writer the same frame woke; only what the socket does not
    // take waits for an asynchronous write under the deadline (flushed).
    bool write_out(After next) {
        after_ = next;
        unit_ = 0;
        first_ = 0;
        if constexpr (TRY_WRITE) {
            if (group_) {
                group_->add(this->shared_from_this());
                return false;
            }
        }
        if (!write_piece()) {
            return false;
        }
        wrote_all();
        return true;
    }

    // The next piece of the outbox: at most WRITE_PIECE_BYTES and WRITE_PIECE_BUFFERS buffers
    // within one unit, `fin` when it ends the unit. The piece is a span over the buffers
    // themselves: its first buffer advanced past what was written, its last one cut to the
    // piece (put_back_cut after the write), so the buffer list is never copied. False when
    // every unit is out.
    bool next_piece(std::span<const net::const_buffer>& piece, bool& fin) {
        auto& bufs = out_.bufs;
        for (;;) {
            if (unit_ == out_.ends.size()) {
                return false;
            }
            const std::size_t unit_end = out_.ends[unit_];
            while (first_ < unit_end && bufs[first_].size() == 0) {
                ++first_;
            }
            if (first_ < unit_end) {
                break;
            }
            ++unit_; // every byte of this unit is out (a unit without bytes is skipped)
        }
        const std::size_t unit_end = out_.ends[unit_];
        std::size_t last = first_;
        std::size_t bytes = 0;
        cut_.reset();
        for (; last < unit_end && last - first_ < WRITE_PIECE_BUFFERS && bytes < WRITE_PIECE_BYTES;
             ++last) {
            if (bufs[last].size() > WRITE_PIECE_BYTES - bytes) {
                cut_ = Cut{last, bufs[last]};
                bufs[last] = net::buffer(bufs[last].data(), WRITE_PIECE_BYTES - bytes);
            }
            bytes += bufs[last].size();
        }
        fin = !cut_;
        for (std::size_t i = last; fin && i < unit_end; ++i) {
            fin = bufs[i].size() == 0;
        }
        piece = std::span<const net::const_buffer>(bufs.data() + first_, last - first_);
        return true;
    }

    // Writes the outbox's next piece asynchronously under the write deadline (piece_written
    // goes on). Returns true when every unit is out already.
    bool write_piece() {
        std::span<const net::const_buffer> piece;
        bool fin = false;
        if (!next_piece(piece, fin)) {
            return true;
        }
        arm_deadline();
        codec_.write_some(
            piece,
            fin,
            on_strand(
                [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) {
                    self->guarded([&] { self->piece_written(ec, n); });
                }));
        return false;
    }

    void put_back_cut() {
        if (cut_) {
            out_.bufs[cut_->index] = cut_->whole;
            cut_.reset();
        }
    }

    // `n` more bytes of the unit are out.
    void advance(std::size_t n) {
        auto& bufs = out_.bufs;
        while (n > 0) {
            const std::size_t size = bufs[first_].size();
            if (n < size) {
                bufs[first_] += n;
                break;
            }
            n -= size;
            ++first_;
        }
    }

    void piece_written(boost::system::error_code ec, std::size_t n) {
        put_back_cut(); // the cut buffer back whole, then advanced
        if (!disarm(ec)) {
            return;
        }
        advance(n);
        if (!write_piece()) {
            return;
        }
        wrote_all();
        go_on();
    }

    // The outbox is out: what the write was for.
    void go_on() {
        switch (after_) {
        case After::subscribe:
            subscribe();
            return;
        case After::step:
            step();
            return;
        }
    }

public:
    /// Flushable: writes what the socket takes now (any thread; the strand touches neither the
    /// outbox nor the socket's state meanwhile: this writer is neither idle nor writing).
    void flush_now() override {
        if constexpr (TRY_WRITE) {
            flush_ = Flush::done;
            std::span<const net::const_buffer> piece;
            bool fin = false;
            while (next_piece(piece, fin)) {
                boost::system::error_code ec;
                const std::size_t n = codec_.try_write(piece, ec);
                put_back_cut();
                if (n > 0 || !ec) {
                    advance(n);
                    continue;
                }
                flush_ = ec == net::error::would_block || ec == net::error::try_again
                             ? Flush::blocked
                             : Flush::failed; // the peer is gone (reset, broken pipe)
                return;
            }
        }
    }

    /// Flushable: on the strand, after flush_now: on when all went out, the rest under the
    /// deadline when the socket was full, the end when it failed (or the stream ended since).
    void flushed() override {
        guarded([&] {
            if (peer_gone_ || ended_ || flush_ == Flush::failed) {
                end();
                return;
            }
            if (flush_ == Flush::blocked && !write_piece()) {
                return;
            }
            wrote_all();
            go_on();
        });
    }

private:
    // When the oldest frame of `batch` was published, if the seat still knows.
    std::optional<std::chrono::steady_clock::time_point>
    oldest_published(const std::vector<hub::OutEvent>& batch) const {
        for (const auto& ev : batch) {
            if (ev.kind == hub::OutEvent::Kind::frame) {
                return seat_->published_at(ev.seq); // a batch's frames ascend
            }
        }
        return std::nullopt;
    }

    // Every unit of the outbox is out.
    void wrote_all() {
        if (published_) {
            s_->counters.observe_publish_to_write(
                std::chrono::steady_clock::now() - *std::exchange(published_, std::nullopt));
        }
        out_.clear();
    }

    // The write deadline: one timer for the operation in flight (a piece, a heartbeat, the
    // close). An operation that makes no progress for the write timeout is cancelled (the
    // transport beneath: the stream ends). Armed lazily: an operation only notes when it
    // started, and the timer — armed by the first operation when it is not armed already —
    // checks on expiry whether an operation is in flight and for how long, waiting again for
    // the rest of the timeout when it is younger. So a prompt write touches no timer (a timer
    // armed and cancelled per write cost two heap updates and a cancelled handler's run on the
    // seat's strand for every frame and viewer). Its own timer, not the transport's: Beast's
    // tcp_stream arms its deadline for every operation that starts while it is set, so the
    // stream's pending read (which only waits for the peer to go) would be given the write
    // timeout too, and a healthy idle subscriber cut after it.
    void arm_deadline() {
        writing_ = true;
        op_started_ = std::chrono::steady_clock::now();
        if (!deadline_armed_) {
            wait_deadline(s_->cfg.write_timeout);
        }
    }

    void wait_deadline(std::chrono::steady_clock::duration d) {
        deadline_armed_ = true;
        deadline_.expires_after(d);
        deadline_.async_wait(
            on_strand([self = this->shared_from_this()](boost::system::error_code ec) {
                self->deadline_armed_ = false;
                if (ec || self->ended_ || !self->writing_) {
                    return; // nothing in flight: the next operation arms it again
                }
                const auto ran = std::chrono::steady_clock::now() - self->op_started_;
                if (ran < self->s_->cfg.write_timeout) {
                    self->wait_deadline(self->s_->cfg.write_timeout - ran);
                    return;
                }
                self->timed_out_ = true;
                StreamOps<typename Codec::Lowest>::cancel(self->codec_.lowest());
            }));
    }

    // The operation in flight ended with `ec`: the deadline stops; a failure ends the stream
    // (counted once as let go when the deadline caused it). Returns whether to go on.
    bool disarm(boost::system::error_code ec) {
        writing_ = false; // the timer, when it fires, finds nothing in flight
        if (!ec) {
            return true;
        }
        if (timed_out_ && !counted_) {
            counted_ = true;
            s_->counters.count_write_timeout();
            spdlog::info(
                "a subscriber was let go: its writes made no progress for {} ms",
                s_->cfg.write_timeout.count());
        }
        end();
        return false;
    }

    // Ends the connection both ways (a pending read completes); the object goes with the last
    // handler that holds it, and its subscription detaches then.
    void end() {
        if (ended_) {
            return;
        }
        ended_ = true;
        deadline_.cancel();
        heartbeat_.cancel();
        wake();
        StreamOps<typename Codec::Lowest>::shutdown(codec_.lowest());
    }

    struct Cut {
        std::size_t index{};     // the buffer cut to fit the piece
        net::const_buffer whole; // as it was before the cut
    };

    std::shared_ptr<Server::Impl> s_;
    std::shared_ptr<hub::Seat> seat_;
    Codec codec_; // owns the stream
    Connections::Ticket ticket_;
    SubscribeOptions opt_;              // until the subscription starts
    std::optional<Subscription> sub_;   // from after the head on
    std::shared_ptr<FlushGroup> group_; // from the subscription on, when the codec can try_write
    net::steady_timer deadline_;        // the write deadline of the operation in flight
    net::steady_timer heartbeat_;       // while the stream waits (armed lazily: go_idle)
    std::vector<hub::OutEvent> batch_;  // while a batch is taken and encoded
    Outbox out_;                        // what is being written
    std::optional<Cut> cut_;
    std::optional<std::chrono::steady_clock::time_point> published_; // the batch being written
    Batches batches_;
    std::chrono::steady_clock::time_point op_started_; // of the operation in flight
    std::chrono::steady_clock::time_point idle_since_; // of the wait, while idle_
    std::size_t unit_{};
    std::size_t first_{};
    After after_{After::step};
    enum class Flush : std::uint8_t { done, blocked, failed };
    Flush flush_{Flush::done}; // how the last flush_now went (read by flushed)
    bool writing_{false};
    bool deadline_armed_{false};
    bool idle_{false}; // waits for a wake-up or the heartbeat
    bool heartbeat_armed_{false};
    bool timed_out_{false};
    bool counted_{false};
    bool peer_gone_{false};
    bool closing_{false};
    bool ended_{false};
};

} // namespace sluice::server::stream_detail
