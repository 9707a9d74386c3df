// Private line readers over a file descriptor: forward in blocks, backward from an offset.
#pragma once

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/file_read.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace sluice::detail {

/// One line of a file, without its newline; valid until the reader's next call.
struct Line {
    std::string_view text;  ///< the bytes of the line
    std::uint64_t offset{}; ///< byte offset of its first byte
};

/// A byte buffer that grows without zero-filling and is reused across refills. `ROW_SCAN_PADDING`
/// readable bytes follow its end, so a line read into it can go to `RowScanner` in place.
class Buffer {
public:
    /// The bytes.
    char* data() noexcept { return data_.get(); }

    /// The bytes.
    const char* data() const noexcept { return data_.get(); }

    /// Bytes in use.
    std::size_t size() const noexcept { return size_; }

    /// Keeps `keep` bytes from `from`, moved to `at`, in a buffer of at least `at + keep` (+room).
    void reshape(std::size_t from, std::size_t keep, std::size_t at, std::size_t size);

private:
    std::unique_ptr<char[]> data_;
    std::size_t size_{};
    std::size_t cap_{};
};

/// Reads the lines of [begin, end) of a file forward, in large blocks (pread; no seek).
/// @par Thread safety: none.
class ForwardLines {
public:
    /// Lines of `fd` from `begin` to `end` (end must follow a newline or be the file's end).
    ForwardLines(int fd, std::uint64_t begin, std::uint64_t end);

    /// The next line, or nullopt at the end; an I/O error sets `failed()`.
    std::optional<Line> next();

    /// Whether a read failed.
    bool failed() const noexcept { return failed_; }

    /// Bytes consumed so far, from `begin`.
    std::uint64_t position() const noexcept { return pos_; }

private:
    int fd_;
    std::uint64_t pos_; // offset of the next unread line
    std::uint64_t end_;
    std::uint64_t buf_lo_; // file offset of buf_[0]
    Buffer buf_;
    bool failed_{};
};

/// Reads the lines before an offset backward (newest first), in blocks: O(bytes returned).
/// @par Thread safety: none.
class BackwardLines {
public:
    /// Lines of `fd` ending at or before `end`, which must be 0 or follow a newline, unless
    /// `open_tail`: then the newest line ends at `end` with no newline.
    BackwardLines(int fd, std::uint64_t end, bool open_tail = false);

    /// The previous line, or nullopt at the file's start; an I/O error sets `failed()`.
    std::optional<Line> prev();

    /// Whether a read failed.
    bool failed() const noexcept { return failed_; }

    /// Offset of the oldest line returned so far (the end, before any).
    std::uint64_t position() const noexcept { return pos_; }

private:
    int fd_;
    std::uint64_t pos_;    // end of the next line to return (its newline excluded)
    std::uint64_t buf_lo_; // file offset of buf_[0]; buf_ covers [buf_lo_, pos_ + 1)
    Buffer buf_;
    bool failed_{};
};

/// Whether a JSONL line is a frame row, by reading its top-level "type" without parsing the
/// rest. Agrees with parsing for valid JSON whose "type" key and value carry no escapes.
bool sniff_is_frame(std::string_view s) noexcept;

/// Whether `line` is one complete JSON text (validated without building a value).
bool valid_json(std::string_view line) noexcept;

/// Whether a line counts as a frame: it sniffs as one and is valid JSON. The counting scans use
/// this rule and the readers skip what fails to parse, so both number the same lines.
inline bool is_frame_line(std::string_view line) noexcept {
    return sniff_is_frame(line) && valid_json(line);
}

/// `is_frame_line` with the validation done by `rows` where it can (simdjson's), else by
/// Boost.JSON: the same answer, faster. `line` needs `ROW_SCAN_PADDING` readable bytes after it
/// (a line of `ForwardLines` has them).
inline bool is_frame_line(RowScanner& rows, std::string_view line) {
    return sniff_is_frame(line) && (rows.valid(line) || valid_json(line));
}

/// Whether `line` counts as a frame under `format`: `is_frame_line` for frame rows, a line
/// `codex_frame_row` maps to a row for a rollout. Every counting scan and every reader numbers
/// lines by this one rule.
inline bool is_frame_line(RowFormat format, std::string_view line) {
    return format == RowFormat::frames ? is_frame_line(line) : codex_frame_row(line).has_value();
}

/// The counting scans' rule (`is_frame_line` of a format) with the row scanner its frame rows are
/// validated by kept across lines; each line needs `ROW_SCAN_PADDING` readable bytes after it.
///
/// @par Thread safety
/// None: one scan's.
class FrameLines {
public:
    /// Counts lines of `format`.
    explicit FrameLines(RowFormat format) noexcept
        : format_(format) {}

    /// Whether `line` is a frame.
    bool is_frame(std::string_view line) {
        return format_ == RowFormat::frames ? is_frame_line(rows_, line)
                                            : is_frame_line(format_, line);
    }

private:
    RowFormat format_;
    RowScanner rows_;
};

} // namespace sluice::detail
