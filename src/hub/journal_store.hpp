// The transcript of a journal as writer jobs and the strand share it (private to the hub).
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/hub/journal.hpp>

#include <boost/system/error_code.hpp>

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::hub {

/// The marker a seat keeps in its folder while frames were published since the last clean turn
/// end: it holds the boot id of the machine that wrote it (see Journal::open).
inline constexpr std::string_view SEAT_UNSYNCED_FILE = "unsynced";

/// This boot's id (/proc/sys/kernel/random/boot_id; empty when unknown).
[[nodiscard]] std::string boot_id();

// Appends and syncs run on the writer thread; pages below the window floor and whole frames are
// read there too, and a file source's reads. The mutex serializes them; it is held for one
// append batch, one sync or one read, never across a wait on anything else.
struct Journal::Store {
    Store(Transcript t, const std::filesystem::path& dir)
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

} // namespace sluice::hub
