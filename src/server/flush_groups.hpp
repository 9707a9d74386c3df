// FlushGroups: the writes of a seat's subscribers spread over the I/O threads. A seat's writers
// all run on its strand (they collect from the seat there); their sockets' writes need not.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sluice::hub {
class Seat;
} // namespace sluice::hub

namespace sluice::server {

/// A seat's strand (hub::Seat::strand_type).
using SeatStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

/// A writer whose outbox can be written off its seat's strand.
class Flushable {
public:
    Flushable() = default;
    Flushable(const Flushable&) = delete;
    Flushable& operator=(const Flushable&) = delete;
    Flushable(Flushable&&) = delete;
    Flushable& operator=(Flushable&&) = delete;

    /// Writes what its socket takes now, without waiting, and notes how it went. Runs on any
    /// thread, never at once with another member of the writer's that touches the outbox or
    /// the socket's state (the writer waits for `flushed`); the strand may meanwhile shut the
    /// socket down.
    virtual void flush_now() = 0;

    /// After `flush_now`, on the seat's strand: goes on from how it went.
    virtual void flushed() = 0;

protected:
    ~Flushable() = default;
};

/// Spreads the writes of one seat's writers over the io_context's threads. A writer with an
/// outbox `add`s itself (on the strand); the first one after a flush posts one `dispatch` onto
/// the strand, which runs after every writer woken by the same frame has taken its batch (they
/// were queued on the strand before it). `dispatch` cuts the writers into chunks of
/// FLUSH_CHUNK: every chunk but the last is posted to the io_context (any thread runs it; it
/// writes its writers' sockets, then posts one continuation back to the strand for all of
/// them), the last is written there and then. So a frame to 1,000 subscribers is written by
/// every I/O thread, with a handful of posts instead of one per subscriber, and the strand only
/// collects and encodes.
///
/// @par Thread safety
/// `add` and `dispatch` on the seat's strand.
class FlushGroup : public std::enable_shared_from_this<FlushGroup> {
public:
    /// Writers per chunk. Basis: a prompt write is one `sendmsg` of ~10 µs on loopback
    /// (bench/RESULTS.md, "Fan-out latency"), so a chunk is ~1 ms of one thread: small enough
    /// to share a frame's writes between threads, large enough that its two posts are noise.
    static constexpr std::size_t FLUSH_CHUNK = 96;

    explicit FlushGroup(SeatStrand strand)
        : strand_(std::move(strand)) {}

    /// Queues `w` for the next flush. On the strand.
    void add(std::shared_ptr<Flushable> w);

private:
    void dispatch();

    SeatStrand strand_;
    std::vector<std::shared_ptr<Flushable>> pending_;
    bool scheduled_{false};
};

/// The FlushGroup of each seat with writers, shared by them (it goes with the last).
///
/// @par Thread safety
/// Safe from any thread.
class FlushGroups {
public:
    /// The group of `seat`'s writers, made when it has none.
    std::shared_ptr<FlushGroup> of(hub::Seat& seat);

private:
    std::mutex mu_;
    std::unordered_map<const hub::Seat*, std::weak_ptr<FlushGroup>> groups_;
};

} // namespace sluice::server
