// Histogram (histogram.hpp).
#include <sluice/core/histogram.hpp>

#include <algorithm>

namespace sluice {

Histogram::Histogram(std::span<const double> bounds) noexcept
    : bounds_(bounds.first(std::min(bounds.size(), MAX_BUCKETS))) {
}

void Histogram::observe(std::chrono::steady_clock::duration d) noexcept {
    const auto us =
        std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
    const double seconds = static_cast<double>(us) / 1e6;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
        if (seconds <= bounds_[i]) {
            bucket_.at(i).fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    sum_us_.fetch_add(static_cast<std::uint64_t>(us), std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const noexcept {
    Snapshot out;
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
        running += bucket_.at(i).load(std::memory_order_relaxed);
        out.le.at(i) = running;
    }
    out.count = std::max(count_.load(std::memory_order_relaxed), running); // never below a bucket
    out.sum_seconds = static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6;
    return out;
}

} // namespace sluice
