// Private: the scans that read a whole transcript forward, and their progress report.
#pragma once

#include "transcript_rows.hpp"

#include <sluice/conversation/turns.hpp>

#include <boost/system/result.hpp>

#include <cstdint>
#include <functional>

namespace sluice::detail {

/// A whole-file scan's progress callback: (bytes done, bytes total).
using ScanProgressFn = std::function<void(std::uint64_t, std::uint64_t)>;

/// Bytes between two progress reports of a whole-file scan: 16 reports a GiB, none for a file
/// shorter than this.
inline constexpr std::uint64_t SCAN_PROGRESS_EVERY = 64ULL << 20;

/// Reports a whole-file scan's position to `progress` (when set) every `SCAN_PROGRESS_EVERY`
/// bytes.
///
/// @par Thread safety
/// None: one scan's.
class ScanProgress {
public:
    /// Reports to `progress` (which must outlive it) of a file `end` bytes long.
    ScanProgress(const ScanProgressFn& progress, std::uint64_t end) noexcept
        : progress_(progress)
        , end_(end) {}

    /// The scan is at byte `position`.
    void at(std::uint64_t position) {
        if (progress_ && position >= next_) {
            progress_(position, end_);
            next_ += SCAN_PROGRESS_EVERY;
        }
    }

private:
    const ScanProgressFn& progress_;
    std::uint64_t end_;
    std::uint64_t next_{SCAN_PROGRESS_EVERY};
};

/// Where a whole-file scan found a frame.
struct ScannedFrame {
    std::uint64_t pos;    ///< its frame number, from 0 at the file's first frame
    std::uint64_t offset; ///< its line's byte offset
    std::uint64_t line;   ///< its 0-based line number
    bool opens_turn;      ///< it opens a turn
};

/// Reads the lines of `fd` in [0, `end`) forward, calling `on_frame` for each frame. Rows are read
/// by the row scanner (validated, only the turn scan's fields read) when `row_scan`; a row it is
/// not sure of, or every row without `row_scan`, is parsed in full by `rows`, which reports bad
/// lines (or fails the scan, strict). `scan` ends as the turn scan of the whole file, `lines` as
/// its line count. @return `rows`' error, `errc::io_error`.
boost::system::result<void> scan_file(
    int fd,
    std::uint64_t end,
    bool row_scan,
    const ScanProgressFn& progress,
    RowReader& rows,
    TurnScan& scan,
    std::uint64_t& lines,
    const std::function<void(const ScannedFrame&)>& on_frame);

} // namespace sluice::detail
