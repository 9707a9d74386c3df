// TurnDurations: how long the hub's turns ran, as a histogram (`sluice_turn_duration_seconds`).
#pragma once

#include <sluice/core/histogram.hpp>

#include <array>
#include <chrono>
#include <cstdint>

namespace sluice::hub {

/// Upper bounds (seconds) of the turn duration histogram's buckets, then +Inf. A model turn takes
/// from about a second (a short answer) to many minutes (an agent's long tool loop), so the
/// buckets spread from 0.5 s to 30 min.
inline constexpr std::array<double, 11> TURN_DURATION_BUCKETS{
    0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800};

/// A histogram of turn durations, by how the turn ended.
///
/// @par Thread safety
/// Safe from any thread (see Histogram).
class TurnDurations {
public:
    /// How a turn ended (the label `outcome` of the metric).
    enum class Outcome : std::uint8_t { ended, cancelled, failed };
    /// Outcomes, for iterating.
    static constexpr std::array<Outcome, 3> OUTCOMES{
        Outcome::ended, Outcome::cancelled, Outcome::failed};
    /// The label value of an outcome ("ended", "cancelled", "failed").
    static const char* name(Outcome o) noexcept;

    /// One outcome's figures, cumulative as Prometheus wants them (the first
    /// `TURN_DURATION_BUCKETS.size()` entries of `le`).
    using Snapshot = Histogram::Snapshot;

    /// Counts one turn of `took` that ended as `outcome`.
    void observe(Outcome outcome, std::chrono::steady_clock::duration took) noexcept;
    /// The figures of `outcome`.
    [[nodiscard]] Snapshot snapshot(Outcome outcome) const noexcept;

private:
    std::array<Histogram, OUTCOMES.size()> series_{
        Histogram(TURN_DURATION_BUCKETS),
        Histogram(TURN_DURATION_BUCKETS),
        Histogram(TURN_DURATION_BUCKETS)};
};

} // namespace sluice::hub
