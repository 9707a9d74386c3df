// Histogram: durations counted into fixed buckets, as Prometheus histograms want them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice {

/// Durations counted into buckets with fixed upper bounds (seconds, ascending), plus a count and
/// a sum: one Prometheus histogram series.
///
/// @par Thread safety
/// Safe from any thread (relaxed atomics: a scrape may see an observation in `count` before its
/// bucket, never a lost one). `bounds` must outlive the histogram (a constant array).
class Histogram {
public:
    /// Most buckets a histogram has (besides +Inf).
    static constexpr std::size_t MAX_BUCKETS = 16;

    /// What the histogram says at one moment, cumulative as Prometheus wants it.
    struct Snapshot {
        std::array<std::uint64_t, MAX_BUCKETS> le{}; ///< observations <= each bound (the first
                                                     ///< `bounds().size()` entries are used)
        std::uint64_t count{};                       ///< every observation (the +Inf bucket)
        double sum_seconds{};                        ///< the observations added
    };

    /// A histogram with upper bounds `bounds` (seconds, ascending, at most MAX_BUCKETS).
    explicit Histogram(std::span<const double> bounds) noexcept;

    /// Counts one observation of `d` (a negative one as 0).
    void observe(std::chrono::steady_clock::duration d) noexcept;

    /// The figures now.
    [[nodiscard]] Snapshot snapshot() const noexcept;

    /// The buckets' upper bounds.
    [[nodiscard]] std::span<const double> bounds() const noexcept { return bounds_; }

private:
    std::span<const double> bounds_;
    std::array<std::atomic<std::uint64_t>, MAX_BUCKETS> bucket_{}; // not cumulative
    std::atomic<std::uint64_t> count_{};
    std::atomic<std::uint64_t> sum_us_{}; // microseconds: an integer adds without a CAS loop
};

} // namespace sluice
