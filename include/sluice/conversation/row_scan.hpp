// RowScanner: the facts the turn scan needs from one JSONL row, without building the row.
#pragma once

#include <sluice/conversation/frame.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sluice {

/// Readable bytes `RowScanner::scan` may touch past a row's end (simdjson's padding; their
/// values do not matter).
inline constexpr std::size_t ROW_SCAN_PADDING = 64;

/// Rows larger than this are left to the full parse (`RowKind::unsure`): the scanner's
/// buffers grow to about 14 bytes per byte of the largest row it took. Basis: keeps a whole-file
/// scan's memory at tens of MiB; real rows above it are rare (inline images).
inline constexpr std::size_t ROW_SCAN_MAX_BYTES = 2U << 20;

/// What `RowScanner::scan` decided about a row.
enum class RowKind : std::uint8_t {
    not_frame, ///< valid JSON that is not a frame (not an object, or its `type` is not a frame's)
    frame,     ///< a frame: its `type` and `TurnFacts` were filled, exactly as `Frame` has them
    unsure,    ///< not decided here (not JSON, too deep, too large, …): parse it with `Frame`
};

/// Validates a row as `Frame::parse` does and reads only the fields `TurnScan` reads (simdjson's
/// DOM parser, fully validating; bench/RESULTS.md "Whole-file scans" measured it against a
/// Boost.JSON handler). It never accepts a row `Frame::parse` rejects: whatever it is not sure
/// of (a parse error, nesting beyond Boost.JSON's limit, numbers it would not read) it answers
/// `unsure`, and the caller parses that row in full. Duplicate keys read as Boost.JSON's do (the
/// last one counts).
///
/// @par Thread safety
/// None: one scanner per thread (it reuses its parse buffers across rows).
class RowScanner {
public:
    RowScanner();                                      ///< allocates lazily, at the first row
    RowScanner(RowScanner&&) noexcept;                 ///< moves the buffers
    RowScanner& operator=(RowScanner&&) noexcept;      ///< moves the buffers
    RowScanner(const RowScanner&) = delete;            ///< owns its buffers
    RowScanner& operator=(const RowScanner&) = delete; ///< owns its buffers
    ~RowScanner();                                     ///< frees the buffers

    /// Scans one row (no newline). `ROW_SCAN_PADDING` bytes past `row.end()` must be readable.
    /// On `RowKind::frame`, `type` and `facts` hold the frame's; otherwise they are unspecified.
    RowKind scan(std::string_view row, std::string& type, TurnFacts& facts);

    /// Whether `row` is JSON, when that is sure: true only for a row `Frame::parse` (and
    /// Boost.JSON) takes too; false for one it refuses or could not decide (too deep, too large,
    /// a number out of its range): ask Boost.JSON then. Padding as `scan`.
    bool valid(std::string_view row);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace sluice
