// A seat's transcript as writer jobs and the strand share it (private to the hub).
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/system/error_code.hpp>

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::hub {

/// The marker a seat keeps in its folder while frames were published since the last clean turn
/// end: it holds the boot id of the machine that wrote it (see `unsynced_marker_lost`).
inline constexpr std::string_view SEAT_UNSYNCED_FILE = "unsynced";

/// This boot's id (/proc/sys/kernel/random/boot_id; empty when unknown).
[[nodiscard]] std::string boot_id();

// Appends and syncs run on the writer thread; restore and pages below the window floor read
// on the writer too (seat_stream.cpp). The mutex serializes them; it is held for one append
// batch, one sync or one page read, never across a wait on anything else.
struct Seat::Store {
    Store(Transcript t, std::filesystem::path dir)
        : transcript(std::move(t))
        , marker(dir / SEAT_UNSYNCED_FILE)
        , boot(boot_id()) {}

    std::mutex mu;
    Transcript transcript;
    // Guarded by mu (writer jobs):
    boost::system::error_code broken; // the first failed append or sync: no append after it
    bool marked{false};               // the unsynced marker is on disk
    std::filesystem::path marker;
    std::string boot;
};

// The state of a foreign seat; confined to the seat's strand.
struct Seat::Foreign {
    std::filesystem::path file; // the session file (never written)
    ForeignListing listing;     // what its listing learned
    bool opened{false}, opening{false}, reading{false}, again{false};
    std::uint64_t ino{}; // the inode opened (a different one at the path: replaced)
    std::string failed;  // why it could not be opened
    std::vector<std::pair<std::shared_ptr<Subscriber>, std::optional<std::string>>> waiting;
    std::vector<std::function<void()>> after_open; // history requests made before it opened
    std::shared_ptr<std::atomic<bool>> count_stop; // set when the file is opened again
};

} // namespace sluice::hub
