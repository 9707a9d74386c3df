// The types a seat is made with and shown by (hub/seat_types.hpp).
#include <sluice/hub/seat_types.hpp>

namespace sluice::hub {

const char* state_name(SeatState s) noexcept {
    switch (s) {
    case SeatState::idle:
        return "idle";
    case SeatState::running:
        return "running";
    case SeatState::queued:
        return "queued";
    case SeatState::unavailable:
        return "unavailable";
    case SeatState::degraded:
        return "degraded";
    case SeatState::waiting:
        return "waiting";
    }
    return "idle";
}

} // namespace sluice::hub
