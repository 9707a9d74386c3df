// TurnDurations (turn_durations.hpp).
#include <sluice/hub/turn_durations.hpp>

#include <cstddef>

namespace sluice::hub {

const char* TurnDurations::name(Outcome o) noexcept {
    switch (o) {
    case Outcome::ended:
        return "ended";
    case Outcome::cancelled:
        return "cancelled";
    case Outcome::failed:
        return "failed";
    }
    return "ended";
}

void TurnDurations::observe(Outcome outcome, std::chrono::steady_clock::duration took) noexcept {
    auto& s = series_.at(static_cast<std::size_t>(outcome));
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    const double seconds = static_cast<double>(us) / 1e6;
    for (std::size_t i = 0; i < TURN_DURATION_BUCKETS.size(); ++i) {
        if (seconds <= TURN_DURATION_BUCKETS.at(i)) {
            s.bucket.at(i).fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    s.sum_us.fetch_add(us > 0 ? static_cast<std::uint64_t>(us) : 0, std::memory_order_relaxed);
    s.count.fetch_add(1, std::memory_order_relaxed);
}

TurnDurations::Snapshot TurnDurations::snapshot(Outcome outcome) const noexcept {
    const auto& s = series_.at(static_cast<std::size_t>(outcome));
    Snapshot out;
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < TURN_DURATION_BUCKETS.size(); ++i) {
        running += s.bucket.at(i).load(std::memory_order_relaxed);
        out.le.at(i) = running;
    }
    out.count = s.count.load(std::memory_order_relaxed);
    if (out.count < running) {
        out.count = running; // a bucket counted before its total: never less than a bucket
    }
    out.sum_seconds = static_cast<double>(s.sum_us.load(std::memory_order_relaxed)) / 1e6;
    return out;
}

} // namespace sluice::hub
