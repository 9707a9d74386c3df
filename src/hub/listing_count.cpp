// A session listing's turn count beyond its head and tail: a larger file counted whole within
// bounds, and a growing file counted by what was appended, so `seats` shows turns unopened.
#include "listing_rows.hpp"

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/hub/claude_projects.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <string_view>

namespace sluice::hub {

namespace {

// What every listing of this process may still read to count larger files whole.
std::atomic<std::uint64_t> count_budget{FOREIGN_COUNT_BUDGET_BYTES};

bool take_budget(std::uint64_t n) {
    auto left = count_budget.load(std::memory_order_relaxed);
    while (left >= n) {
        if (count_budget.compare_exchange_weak(left, left - n, std::memory_order_relaxed)) {
            return true;
        }
    }
    return false;
}

// Reads [listing.counted, listing.size) of `file` and feeds its whole lines to the listing's
// turn scan. @return false when it cannot be read.
bool count_range(const std::filesystem::path& file, ForeignListing& listing) {
    const auto n = listing.size - listing.counted;
    std::string text(static_cast<std::size_t>(n), '\0');
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const bool ok = pread_all(fd, text.data(), n, listing.counted);
    ::close(fd);
    if (!ok) {
        return false;
    }
    // Only whole lines: the last one may still be being written (counted when its end comes).
    const std::string_view s(text);
    std::size_t at = 0;
    std::uint64_t turns = *listing.turns;
    for (auto nl = s.find('\n'); nl != std::string_view::npos; nl = s.find('\n', at)) {
        const auto line = s.substr(at, nl - at);
        auto row = listing.format == RowFormat::codex_rollout ? codex_frame_row(line)
                                                              : read_listing_row(line);
        if (row) {
            if (feed_turn_scan(std::move(*row), listing.scan)) {
                ++turns;
            }
        }
        at = nl + 1;
    }
    listing.turns = turns;
    listing.counted += at;
    return true;
}

} // namespace

void count_larger_file(const std::filesystem::path& file, ForeignListing& listing) {
    if (listing.turns || listing.size > FOREIGN_COUNT_STEP_BYTES || !take_budget(listing.size)) {
        return;
    }
    listing.turns = 0;
    listing.counted = 0;
    listing.scan = TurnScan{};
    if (!count_range(file, listing)) {
        listing.turns.reset();
    }
}

void count_appended(const std::filesystem::path& file, ForeignListing& listing) {
    if (!listing.turns) {
        return;
    }
    if (listing.size < listing.counted || listing.size - listing.counted > FOREIGN_COUNT_STEP_BYTES
        || !count_range(file, listing)) {
        listing.turns.reset();
    }
}

} // namespace sluice::hub
