// Private: a transcript's lines read as held frames, and the report of the lines that were damage.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>

#include <boost/system/result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace sluice::detail {

/// `text`, one line of a transcript of `format`, as a frame (not in its held form).
/// @return the frame; a null frame for a line that is no frame (a row of another type, JSON that
/// is not an object, a rollout line `codex_frame_row` maps to nothing); a JSON error code for a
/// line that is not JSON (a rollout line is parsed only when it may be a frame).
boost::system::result<FramePtr> line_frame(RowFormat format, std::string_view text);

/// Reads one transcript line as a frame in its held form, or as a row that is no frame; a line
/// that is not JSON is damage: skipped and reported (logged, kept up to
/// `TRANSCRIPT_BAD_LINES_KEPT`), or, strict, the read's failure (`bad_line`).
///
/// @par Thread safety
/// None: one owner (its `Transcript`).
class RowReader {
public:
    /// Lines of the transcript at `path` (named in the log) read as `format` says, failing on
    /// damage when `strict`.
    RowReader(std::filesystem::path path, bool strict, RowFormat format = RowFormat::frames)
        : path_(std::move(path))
        , strict_(strict)
        , format_(format) {}

    /// Reads `text`, the 0-based line `line` (end-relative until `counted`: then it is named
    /// only once the file is counted, see `renumber`). @return the frame (held form), a null
    /// frame for a row that is no frame or a skipped bad line, `errc::corrupt_data` for a bad
    /// line when strict.
    boost::system::result<FramePtr> parse(std::string_view text, std::uint64_t line, bool counted);

    /// Lines noted while numbered from the end take their numbers from the file's start: each
    /// moves down by `line_origin`.
    void renumber(std::uint64_t line_origin) noexcept;

    /// Forgets the bad lines found so far (a full scan finds them again).
    void clear() noexcept;

    /// The line that made the last read fail, if one did (strict only).
    const std::optional<BadLine>& bad_line() const noexcept { return bad_line_; }

    /// Bad lines skipped so far, oldest found first; at most `TRANSCRIPT_BAD_LINES_KEPT`.
    const std::vector<BadLine>& bad_lines() const noexcept { return bad_lines_; }

    /// Bad lines skipped so far, kept or not.
    std::uint64_t total() const noexcept { return total_; }

private:
    void note(BadLine bad, bool counted);

    std::filesystem::path path_;
    bool strict_;
    RowFormat format_;
    std::optional<BadLine> bad_line_;
    std::vector<BadLine> bad_lines_;
    std::uint64_t total_{};
};

} // namespace sluice::detail
