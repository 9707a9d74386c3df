// TurnDurations: how long the hub's turns ran, as a histogram (`sluice_turn_duration_seconds`).
#pragma once

#include <array>
#include <atomic>
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
/// Safe from any thread (relaxed atomics: a scrape may see one turn counted in `count` before its
/// bucket, never a lost one).
class TurnDurations {
public:
    /// How a turn ended (the label `outcome` of the metric).
    enum class Outcome : std::uint8_t { ended, cancelled, failed };
    /// Outcomes, for iterating.
    static constexpr std::array<Outcome, 3> OUTCOMES{
        Outcome::ended, Outcome::cancelled, Outcome::failed};
    /// The label value of an outcome ("ended", "cancelled", "failed").
    static const char* name(Outcome o) noexcept;

    /// One outcome's figures, cumulative as Prometheus wants them.
    struct Snapshot {
        std::array<std::uint64_t, TURN_DURATION_BUCKETS.size()> le{}; ///< turns <= each bound
        std::uint64_t count{}; ///< every turn (the +Inf bucket)
        double sum_seconds{};  ///< their durations added
    };

    /// Counts one turn of `took` that ended as `outcome`.
    void observe(Outcome outcome, std::chrono::steady_clock::duration took) noexcept;
    /// The figures of `outcome`.
    [[nodiscard]] Snapshot snapshot(Outcome outcome) const noexcept;

private:
    struct Series {
        std::array<std::atomic<std::uint64_t>, TURN_DURATION_BUCKETS.size()>
            bucket{}; // not cumulative
        std::atomic<std::uint64_t> count{};
        std::atomic<std::uint64_t> sum_us{}; // microseconds: an integer adds without a CAS loop
    };

    std::array<Series, OUTCOMES.size()> series_{};
};

} // namespace sluice::hub
