// A seat's transcript as writer jobs and the strand share it (private to the hub).
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/hub/seat.hpp>

#include <mutex>

namespace sluice::hub {

// Appends and syncs run on the writer thread; restore and pages below the window floor read
// on the strand. The mutex serializes the two; it is held for one append batch, one sync or
// one page read, never across a wait on anything else.
struct Seat::Store {
    explicit Store(Transcript t)
        : transcript(std::move(t)) {}

    std::mutex mu;
    Transcript transcript;
};

} // namespace sluice::hub
