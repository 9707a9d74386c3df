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
    series_.at(static_cast<std::size_t>(outcome)).observe(took);
}

TurnDurations::Snapshot TurnDurations::snapshot(Outcome outcome) const noexcept {
    return series_.at(static_cast<std::size_t>(outcome)).snapshot();
}

} // namespace sluice::hub
