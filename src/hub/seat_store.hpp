// A foreign seat's state, and the journal's store its reads share (private to the hub).
#pragma once

#include "journal_store.hpp"

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

// The state of a foreign seat; confined to the seat's strand.
struct Seat::Foreign {
    std::filesystem::path file; // the session file (never written)
    ForeignListing listing;     // what its listing learned
    bool opened{false}, opening{false}, reading{false}, again{false};
    std::uint64_t ino{}; // the inode opened (a different one at the path: replaced)
    std::string failed;  // why it could not be opened
    std::vector<std::function<void()>> after_open; // history requests made before it opened
    std::shared_ptr<std::atomic<bool>> count_stop; // set when the file is opened again
};

} // namespace sluice::hub
