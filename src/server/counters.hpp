// The server's own figures (requests, refusals, subscribers let go, lane levels), counted from
// any thread and read by /v1/stats and /metrics.
#pragma once

#include <sluice/core/histogram.hpp>
#include <sluice/hub/subscriber.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice::server {

/// Upper bounds (seconds) of `sluice_publish_to_write_seconds`' buckets, then +Inf. A frame
/// reaches a prompt viewer's socket in well under a millisecond to a few milliseconds; a
/// thousand viewers of one seat or a loaded machine take tens of milliseconds; a stalled one is
/// let go at the write timeout (seconds).
inline constexpr std::array<double, 13> PUBLISH_TO_WRITE_BUCKETS{
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

/// The server's counters. Each is a relaxed atomic: a figure, not a synchronisation point.
///
/// @par Thread safety
/// Safe from any thread.
class Counters {
public:
    /// What the counters say at one moment (each read on its own).
    struct Snapshot {
        std::uint64_t requests{};             ///< HTTP requests read
        std::uint64_t rejected{};             ///< connections refused over the limit
        std::uint64_t lane_peak_retained{};   ///< most preview bytes one lane was seen holding
        std::uint64_t gap_bytes{};            ///< preview bytes reported as gap, all streams
        std::uint64_t let_go_write_timeout{}; ///< subscribers let go: write stalled
        std::uint64_t let_go_lagged{};        ///< subscribers let go: behind the front
        std::uint64_t ws_overloaded{};        ///< WebSocket ops refused as overloaded
        std::uint64_t accept_backoffs{};      ///< accept paused: out of descriptors
    };

    /// An HTTP request was read.
    void count_request() noexcept { requests_.fetch_add(1, std::memory_order_relaxed); }

    /// A connection was refused at the gate (or answered from the backlog while out of
    /// descriptors).
    void count_rejected() noexcept { rejected_.fetch_add(1, std::memory_order_relaxed); }

    /// A subscriber was let go: its writes made no progress for the write timeout.
    void count_write_timeout() noexcept {
        let_go_write_timeout_.fetch_add(1, std::memory_order_relaxed);
    }

    /// A subscriber was let go: it fell behind the window front.
    void count_lagged() noexcept { let_go_lagged_.fetch_add(1, std::memory_order_relaxed); }

    /// A WebSocket op was answered `overloaded`.
    void count_ws_overloaded() noexcept { ws_overloaded_.fetch_add(1, std::memory_order_relaxed); }

    /// The accept loop paused for want of descriptors. @return the pauses so far, this one in.
    std::uint64_t count_accept_backoff() noexcept {
        return accept_backoffs_.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    /// Notes what a subscriber's lane holds, before its writer collects (on the seat strand):
    /// a stalled writer collects next when its socket drains, so the level it then sees is what
    /// the lane held all that while.
    void note_lane_level(const hub::Subscriber& sub) noexcept {
        const auto level = sub.preview_retained();
        auto cur = lane_peak_retained_.load(std::memory_order_relaxed);
        while (
            level > cur
            && !lane_peak_retained_.compare_exchange_weak(cur, level, std::memory_order_relaxed)) {
        }
    }

    /// Counts the gap bytes a collect reported. `gap_seen`: the subscriber's count at the last
    /// note.
    void note_gaps(const hub::Subscriber& sub, std::uint64_t& gap_seen) noexcept {
        gap_bytes_.fetch_add(sub.gap_bytes() - gap_seen, std::memory_order_relaxed);
        gap_seen = sub.gap_bytes();
    }

    /// A batch of frames was written to a subscriber's socket (handed to the kernel whole)
    /// `took` after its oldest frame was published (made durable and visible to viewers).
    void observe_publish_to_write(std::chrono::steady_clock::duration took) noexcept {
        publish_to_write_.observe(took);
    }

    /// Publish-to-write times, one observation per batch written.
    [[nodiscard]] const Histogram& publish_to_write() const noexcept { return publish_to_write_; }

    /// Every counter, read now.
    [[nodiscard]] Snapshot snapshot() const noexcept {
        const auto r = std::memory_order_relaxed;
        return {
            requests_.load(r),
            rejected_.load(r),
            lane_peak_retained_.load(r),
            gap_bytes_.load(r),
            let_go_write_timeout_.load(r),
            let_go_lagged_.load(r),
            ws_overloaded_.load(r),
            accept_backoffs_.load(r)};
    }

private:
    std::atomic<std::uint64_t> requests_{0};
    std::atomic<std::uint64_t> rejected_{0};
    std::atomic<std::uint64_t> lane_peak_retained_{0};
    std::atomic<std::uint64_t> gap_bytes_{0};
    std::atomic<std::uint64_t> let_go_write_timeout_{0};
    std::atomic<std::uint64_t> let_go_lagged_{0};
    std::atomic<std::uint64_t> ws_overloaded_{0};
    std::atomic<std::uint64_t> accept_backoffs_{0};
    Histogram publish_to_write_{PUBLISH_TO_WRITE_BUCKETS};
};

} // namespace sluice::server
