// The relay: a bounded caller-facing stream boundary between a turn's producer and its caller.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/core/event.hpp>
#include <sluice/core/relay_queue.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

namespace sluice {

/// Process-wide preview byte accounting over every relay (exact: produced == forwarded +
/// dropped + retained whenever no relay is mid-operation).
struct RelaySnapshot {
    std::uint64_t produced_delta_bytes{};      ///< preview bytes sent into relays
    std::uint64_t forwarded_delta_bytes{};     ///< preview bytes handed to callers
    std::uint64_t dropped_delta_bytes{};       ///< preview bytes dropped (budget, caller gone)
    std::uint64_t retained_delta_bytes{};      ///< preview bytes held now
    std::uint64_t peak_retained_delta_bytes{}; ///< the highest retained total seen
    std::uint64_t active_relays{};             ///< relays not yet ended
};

/// The process-wide relay counters. @par Thread safety: safe from any thread.
[[nodiscard]] RelaySnapshot stream_relay_snapshot() noexcept;

class RelaySender;
class RelayReceiver;

/// Creates a relay for one turn.
/// @param turn cancelled when the receiver is destroyed before the relay's input ended.
/// @param limits the byte policy's limits (the seed's constants by default).
/// @return the producer's end and the caller's end.
[[nodiscard]] std::pair<RelaySender, RelayReceiver>
make_stream_relay(CancellationToken turn, RelayLimits limits = {});

namespace detail {
struct RelayState;

/// A waiter parked by an asynchronous receive; completed exactly once, by whoever unparks it.
class RelayWaiter {
public:
    virtual ~RelayWaiter() = default;
    /// The relay has an event or has ended; retry the receive.
    virtual void ready() = 0;
};
} // namespace detail

/// The producer's end of a relay. Move-only.
///
/// @par Thread safety
/// `send` and `close` may be called from any thread (one sender object, used by one thread at
/// a time; the receiver may run concurrently on another).
class RelaySender {
public:
    /// A sender attached to no relay (sends are ignored).
    RelaySender() = default;
    /// Ends input (same as `close()`).
    ~RelaySender();
    RelaySender(RelaySender&&) noexcept = default;
    RelaySender& operator=(RelaySender&& other) noexcept;
    RelaySender(const RelaySender&) = delete;
    RelaySender& operator=(const RelaySender&) = delete;

    /// Ingests one event under the relay policy. Never blocks and never waits on the caller.
    /// @return false once the caller has gone (the event was discarded: stop producing).
    bool send(StreamEvent ev);

    /// Ends input: the caller receives what is queued, then the end. Idempotent.
    void close() noexcept;

    /// Whether the caller has gone (destroyed its receiver).
    [[nodiscard]] bool caller_gone() const noexcept;

private:
    friend std::pair<RelaySender, RelayReceiver>
    make_stream_relay(CancellationToken turn, RelayLimits limits);

    explicit RelaySender(std::shared_ptr<detail::RelayState> s) noexcept
        : state_(std::move(s)) {}

    std::shared_ptr<detail::RelayState> state_;
};

/// The caller's end of a relay. Move-only. Destroying it before the end is the caller going
/// away: the turn's token is cancelled at once and whatever is queued is discarded.
///
/// Up to RELAY_CHANNEL_CAPACITY events are moved at a time from the policy queue into this
/// receiver's own channel buffer (counted as forwarded then), so a consumer takes the lock
/// once per batch, not once per event.
///
/// @par Thread safety
/// One receiver object is used by one thread (or strand) at a time; the sender may run
/// concurrently on another.
class RelayReceiver {
public:
    /// A receiver attached to no relay (it is at its end).
    RelayReceiver() = default;
    /// Cancels the turn if input has not ended; discards what is queued.
    ~RelayReceiver();
    RelayReceiver(RelayReceiver&&) noexcept = default;
    RelayReceiver& operator=(RelayReceiver&& other) noexcept;
    RelayReceiver(const RelayReceiver&) = delete;
    RelayReceiver& operator=(const RelayReceiver&) = delete;

    /// Blocks until an event arrives (returned) or the relay ends (nullopt).
    std::optional<StreamEvent> next();

    /// As `next`, but gives up after `timeout`; check `ended()` to tell a timeout from the end.
    std::optional<StreamEvent> next_for(std::chrono::nanoseconds timeout);

    /// Returns an event if one is ready now, without blocking.
    std::optional<StreamEvent> try_next();

    /// Whether the relay has ended and every event has been received.
    [[nodiscard]] bool ended() const noexcept;

    /// This relay's own preview counters (a copy, taken under the lock).
    [[nodiscard]] RelayCounters counters() const;

    /// Parks `w` until an event is ready or the relay ends; returns it back if that is already
    /// so (the caller then retries at once). Low-level hook for `async_next`.
    std::unique_ptr<detail::RelayWaiter> park(std::unique_ptr<detail::RelayWaiter> w);

    /// Takes a parked waiter back (cancellation); nullptr if it was already unparked.
    std::unique_ptr<detail::RelayWaiter> unpark() noexcept;

private:
    friend std::pair<RelaySender, RelayReceiver>
    make_stream_relay(CancellationToken turn, RelayLimits limits);
    explicit RelayReceiver(std::shared_ptr<detail::RelayState> s) noexcept;
    bool refill(std::optional<std::chrono::steady_clock::time_point> deadline, bool block);
    void release() noexcept;

    std::shared_ptr<detail::RelayState> state_;
    std::deque<StreamEvent> channel_; // at most RELAY_CHANNEL_CAPACITY events
    bool ended_{true};
};

} // namespace sluice
