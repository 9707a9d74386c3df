// Private: a transcript's numbering (frames, lines, checkpoints, turn openings) and its sidecar.
#pragma once

#include "lines.hpp"
#include "transcript_file.hpp"
#include "transcript_scan.hpp"

#include <sluice/conversation/row_scan.hpp>

#include <boost/system/result.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::detail {

/// A frame the numbering knows the place of.
struct Checkpoint {
    std::uint64_t pos;    ///< its frame position
    std::uint64_t offset; ///< the byte offset of its line
    std::uint64_t line;   ///< its 0-based line number
};

/// The step-by-step count behind `TranscriptCount`: every line of a file up to the end it was
/// opened at, counted by the rule of the count on open, on its own descriptor. It also finds how
/// many frames precede the oldest frame a read from the end reached (the probe), which `resolve`
/// checks against the numbering from the end.
///
/// @par Thread safety
/// None: one owner at a time.
class TranscriptCounter {
public:
    /// Counts `fd` (owned: closed with the counter) up to `end`; `probe`, if any, is the oldest
    /// frame read from the end (its offset and the position it was given).
    TranscriptCounter(int fd, std::uint64_t end, std::optional<Checkpoint> probe, RowFormat format);

    /// Counts on for at least `bytes` more bytes (whole lines). @return whether it is done;
    /// `errc::io_error` on a failed read.
    boost::system::result<bool> step(std::uint64_t bytes);

    /// Bytes counted so far, and in all.
    std::pair<std::uint64_t, std::uint64_t> progress() const noexcept;

    /// Whether every line up to `end` is counted.
    bool done() const noexcept { return done_; }

    /// The end counted to: the transcript's end when it was opened.
    std::uint64_t end() const noexcept { return end_; }

    /// Frames counted.
    std::uint64_t frames() const noexcept { return frames_; }

    /// Lines counted.
    std::uint64_t lines() const noexcept { return lines_; }

    /// (offset, line) of every `TRANSCRIPT_CHECKPOINT_FRAMES`-th frame from the first.
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& checkpoints() const noexcept {
        return checkpoints_;
    }

    /// Whether the count numbers the probe as the reads from the end did, were the file's first
    /// frame at position `origin` (true without a probe).
    bool confirms(std::uint64_t origin) const noexcept;

private:
    OwnedFd fd_;
    std::uint64_t end_;
    ForwardLines lines_in_;
    FrameLines rows_;
    std::uint64_t frames_{};
    std::uint64_t lines_{};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> checkpoints_;
    std::optional<Checkpoint> probe_;
    std::optional<std::uint64_t> probe_before_; // frames the count found before the probe
    bool done_{false};
};

/// The numbering of a transcript's frames and its sidecar index (`<file>.sidx`): the frame and
/// line totals, a checkpoint every `TRANSCRIPT_CHECKPOINT_FRAMES` frames and the turn openings,
/// each with its byte offset. It is loaded from the sidecar (and caught up on what was appended
/// after it), or counted by a scan of every byte, or — opened end-relative — numbered from the
/// end (`open_uncounted`, upper bounds) until a `TranscriptCounter` resolves where 0 is.
///
/// The sidecar is binary: an 8-byte magic, a version, then 32-byte records (a checkpoint, an
/// opening, the origin, a mark of the totals); what follows the last mark is dropped on load, so
/// a torn append costs only the records since.
///
/// @par Thread safety
/// None: one owner (its `Transcript`).
class TranscriptIndex {
public:
    /// The numbering of a file whose lines are read as `format` says.
    explicit TranscriptIndex(RowFormat format = RowFormat::frames) noexcept
        : format_(format) {}

    /// Loads the sidecar at `ipath` for the file `fd` of `end` bytes and catches up on the rows
    /// after its last mark; keeps it open to append to when `writable`. @return whether it was
    /// valid (else the numbering is empty).
    bool load(const std::filesystem::path& ipath, int fd, std::uint64_t end, bool writable);

    /// Whether `load` found a valid sidecar.
    bool loaded() const noexcept { return loaded_; }

    /// Counts the file `fd` of `end` bytes from its start, validating every line that looks like
    /// a frame (the only O(file) step of an open). Writes nothing. @return `errc::io_error`.
    boost::system::result<void> count(int fd, std::uint64_t end, const ScanProgressFn& progress);

    /// Numbers a file of `end` bytes from its end (see `TranscriptOptions::end_relative`).
    void open_uncounted(std::uint64_t end) noexcept;

    /// Takes the numbering of a full scan (positions from `origin`): its checkpoints, openings
    /// and totals.
    void replace(
        std::vector<Checkpoint> checkpoints,
        std::vector<Checkpoint> openings,
        std::uint64_t frames,
        std::uint64_t lines) noexcept;

    /// Numbers the next frame, at `offset`, on the next line; `opens` if it opens a turn.
    void add_frame(std::uint64_t offset, bool opens);

    /// Counts the next line.
    void add_line() noexcept { ++lines_; }

    /// Rewrites the sidecar at `ipath` whole (safe write) for a file of `end` bytes, the turn
    /// openings with it when `with_openings`. @return the write's error.
    boost::system::result<void>
    write(const std::filesystem::path& ipath, std::uint64_t end, bool with_openings);

    /// Appends the records noted since the last write and a mark at `end` (or, with no sidecar
    /// open, writes it whole). A failed append closes it, so the next sync rewrites it.
    /// @return the OS reason of a failed write.
    boost::system::result<void> sync(const std::filesystem::path& ipath, std::uint64_t end);

    /// Frames numbered (an upper bound until `counted`).
    std::uint64_t frames() const noexcept { return frames_; }

    /// Lines counted (an upper bound until `counted`).
    std::uint64_t lines() const noexcept { return lines_; }

    /// Whether positions are known from the file's start.
    bool counted() const noexcept { return counted_; }

    /// The position of the file's first frame.
    std::uint64_t origin() const noexcept { return origin_; }

    /// Frames numbered when opened end-relative (the bound positions count down from).
    std::uint64_t open_frames() const noexcept { return open_frames_; }

    /// The oldest frame a read from the end reached, not counted yet.
    const std::optional<Checkpoint>& low() const noexcept { return low_; }

    /// The known turn openings, ascending.
    const std::vector<Checkpoint>& openings() const noexcept { return openings_; }

    /// The nearest known frame at or after `pos`: a checkpoint, the oldest frame a read from the
    /// end reached, or the end of a file of `end` bytes (position `frames`).
    Checkpoint at_or_after(std::uint64_t pos, std::uint64_t end) const;

    /// The nearest checkpoint at or before `pos`, else the file's start (position `origin`).
    Checkpoint at_or_before(std::uint64_t pos) const;

    /// Keeps `c` as the oldest frame a read from the end reached, if it is older.
    void note_low(const Checkpoint& c);

    /// Starts the count of a numbering not yet `counted`, on a `dup` of `fd`.
    /// @return the counter; `errc::conflict` when counted; `errc::io_error`.
    boost::system::result<std::unique_ptr<TranscriptCounter>> start_count(int fd) const;

    /// Takes a finished count: positions keep their values, `origin` becomes known, the
    /// checkpoints below the window are added. Writes nothing. @return how far line numbers move
    /// down (for the bad lines noted); errors as `Transcript::resolve`.
    boost::system::result<std::uint64_t> resolve(const TranscriptCounter& count);

private:
    void note(std::uint64_t pos, std::uint64_t offset, std::uint64_t line, bool opens);

    RowFormat format_;
    OwnedFd fd_; // the sidecar, open to append (writable, once written or loaded)
    bool loaded_{};
    std::uint64_t frames_{};
    std::uint64_t lines_{};
    bool counted_{true};     // positions are known from the file's start
    std::uint64_t origin_{}; // position of the file's first frame
    // Not counted yet (end_relative): the end, frames_ and lines_ as opened (bounds, not
    // counts), and the oldest frame a read from the end reached (an anchor for pages).
    std::uint64_t open_end_{}, open_frames_{}, open_lines_{};
    std::optional<Checkpoint> low_;
    std::vector<Checkpoint> checkpoints_; // ascending positions
    std::vector<Checkpoint> openings_;    // known turn openings, ascending
    std::vector<char> pending_;           // records not yet written
};

} // namespace sluice::detail
