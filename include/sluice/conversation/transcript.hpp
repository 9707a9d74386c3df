// Transcript: one append-only JSONL file per seat, a sidecar index, windows and pages read from the
// end.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/conversation/window.hpp>

#include <boost/system/result.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

/// Frames between two checkpoints (frame number → byte offset) of the index.
inline constexpr std::uint64_t TRANSCRIPT_CHECKPOINT_FRAMES = 1024;

/// Bad lines a transcript keeps to report (more are counted, not kept). Basis: a warning list
/// a person reads; a file with more damage than this is reported by its count.
inline constexpr std::size_t TRANSCRIPT_BAD_LINES_KEPT = 100;

/// Bytes of the shortest line a frame row can be: `{"type":"user"}` and its newline (a frame row is
/// an object whose `type` is user, assistant, system or result). So a file of n bytes holds at
/// most n / 16 frames: the bound an end-relative numbering starts from (`end_relative`).
inline constexpr std::uint64_t TRANSCRIPT_MIN_FRAME_LINE_BYTES = 16;

/// How a transcript's lines are read as frames.
enum class RowFormat : std::uint8_t {
    frames, ///< each line is a row; rows of a frame type are frames (sluice's, Claude Code's)
    codex_rollout, ///< a Codex CLI rollout: each line is at most one frame (`codex_frame_row`)
};

/// How a transcript is opened.
struct TranscriptOptions {
    bool read_only{false};  ///< never create, truncate, append or write the index
    bool write_index{true}; ///< keep the sidecar index (`<file>.sidx`) up to date
    /// A line that is not JSON fails a read (`errc::corrupt_data`, see `bad_line`) instead of
    /// being skipped and reported in `bad_lines`.
    bool strict{false};
    /// Called now and then during a scan over the whole file: (bytes done, bytes total).
    std::function<void(std::uint64_t, std::uint64_t)> progress{};
    /// Where the sidecar index lives (empty: `<file>.sidx`, beside it). When set, the index is
    /// kept there even when `read_only` (a foreign file: the file itself is never written).
    std::filesystem::path index_file{};
    /// Count a transcript with no valid index on open (a scan of every byte). False is for a
    /// caller whose next call is `openings` or `build_index`, which count it as they scan: until
    /// then such a transcript reads as empty (no frames, no lines). A valid index is loaded either
    /// way.
    bool count_on_open{true};
    /// Whole-file scans (`openings`, `build_index`) read rows with `RowScanner` (only the turn
    /// scan's fields); false parses every row in full with `Frame::parse`, as before it (the same
    /// result, slower: kept to compare the two).
    bool row_scan{true};
    /// Another process appends to the file (a foreign transcript, read-only): a last piece with
    /// no newline is a line still being written — neither counted nor cut, waited for; `refresh`
    /// takes it once its newline is there.
    bool follow{false};
    /// With no valid index, do not count the file on open: number its frames from the end, so
    /// opening costs the window, not the file. The frame at the end then takes position
    /// `size / TRANSCRIPT_MIN_FRAME_LINE_BYTES + 1` (an upper bound of the frames in the file,
    /// so every position stays >= 0) and frames before it count down; a read from the end
    /// that reaches the file's start learns the count and numbers from 0 instead. Positions
    /// keep their values for the transcript's life (`resolve` fixes where 0 was, not them);
    /// until `counted()`, the index is not written.
    bool end_relative{false};
    /// How lines are read as frames. Whatever the format, one line is at most one frame, so byte
    /// offsets, the index and the numbering from the end work alike; a `codex_rollout` transcript
    /// is read-only (sluice never writes a Codex rollout).
    RowFormat format{RowFormat::frames};
};

class Transcript;

namespace detail {
class TranscriptCounter;
} // namespace detail

/// The count of a transcript's file as it was when it was opened end-relative: every line
/// before that end, validated as the opening count does, made apart from the transcript (on
/// its own descriptor, a `dup` of the transcript's, so the same file even if the path is
/// replaced) and step by step, so a long count holds no lock and blocks no queue for long.
/// `Transcript::resolve` takes it when done.
///
/// @par Thread safety
/// None: one owner at a time (the hub hands it from writer job to writer job).
class TranscriptCount {
public:
    TranscriptCount(TranscriptCount&&) noexcept;                 ///< moves the count
    TranscriptCount& operator=(TranscriptCount&&) noexcept;      ///< moves the count
    TranscriptCount(const TranscriptCount&) = delete;            ///< single owner
    TranscriptCount& operator=(const TranscriptCount&) = delete; ///< single owner
    ~TranscriptCount();                                          ///< closes its descriptor

    /// Counts on for at least `bytes` more bytes (whole lines). @return whether it is done;
    /// `errc::io_error` on a failed read.
    boost::system::result<bool> step(std::uint64_t bytes);

    /// Bytes counted so far, and in all.
    std::pair<std::uint64_t, std::uint64_t> progress() const noexcept;

private:
    friend class Transcript;
    explicit TranscriptCount(std::unique_ptr<detail::TranscriptCounter> counter);
    std::unique_ptr<detail::TranscriptCounter> counter_;
};

/// A line that could not be read as JSON: its 1-based number and what was wrong.
struct BadLine {
    std::uint64_t line{}; ///< 1-based line number in the file
    std::string what;     ///< what was wrong
};

/// A seat's transcript: JSONL, one row per line; frames are numbered 0, 1, … among frame rows.
///
/// Non-frame rows of foreign transcripts (`summary`, `queue-operation`, JSON that is not an
/// object, blank lines) stay in the file but are not frames and take no position. On open, a
/// torn last line (no newline, or not JSON) is truncated away and logged; read-only, a last
/// piece with no newline is ignored and logged. A line that is not JSON anywhere else is damage:
/// it takes no position (the counting scans validate every line that looks like a frame), is
/// never served, and is reported in `bad_lines` when a read meets it (or fails the read, with
/// `TranscriptOptions::strict`). The sidecar index (`<file>.sidx`) holds the frame and line totals,
/// checkpoints every `TRANSCRIPT_CHECKPOINT_FRAMES` frames and the turn openings, each with its
/// byte offset, so opening costs O(index) and a window or a page reads O(window) / O(page) bytes
/// from the end. A transcript with no valid index (a foreign one) is counted once on open by a scan
/// that reads every byte and builds no row (it sniffs each row's `type` and validates frame rows,
/// simdjson first: the only O(file) step; numbering needs the count), and
/// the index is then written unless read-only — or, opened `end_relative`, it is numbered from
/// its end instead and counted afterwards (`start_count`, `resolve`), so opening costs a window.
///
/// A transcript is made of parts, each with its own share of the state (all private to
/// `src/conversation/`): the file (`TranscriptFile`: the descriptor, the torn tail, appends and
/// byte reads), the numbering (`TranscriptIndex`: totals, checkpoints, turn openings, the sidecar,
/// the count and the end-relative resolve), the row reader (`RowReader`: lines as held frames,
/// bad lines) and the turn scan at the end. This class joins them: the reads from the end
/// (window, page, frame span) and the whole-file scans are its own.
///
/// @par Thread safety
/// None: a single owner (the hub calls it from the seat's strand). Movable, not copyable.
class Transcript {
public:
    /// Opens (or, unless read-only, creates) the transcript at `path`.
    /// @return the transcript; `errc::not_found` (missing, read-only), `errc::bad_request` (not a
    /// regular file), the OS reason (system category) when it cannot be opened for writing
    /// (EROFS, EACCES, EPERM: the caller may open it read-only), `errc::io_error`.
    static boost::system::result<Transcript>
    open(std::filesystem::path path, TranscriptOptions options = {});

    Transcript(Transcript&& other) noexcept;            ///< moves the file and its state
    Transcript& operator=(Transcript&& other) noexcept; ///< moves the file and its state
    Transcript(const Transcript&) = delete;             ///< single owner
    Transcript& operator=(const Transcript&) = delete;  ///< single owner
    ~Transcript();                                      ///< closes (does not sync)

    /// Appends a frame (its compact JSON and a newline). Frames are appended before they are
    /// published; durability comes with `sync`. A failed write is undone (the file is cut back to
    /// its last whole line). @return `errc::bad_request` for a non-frame row, `errc::conflict`
    /// when read-only, else the OS reason (system category: ENOSPC, EFBIG, EIO, …).
    boost::system::result<void> append(const Frame& f);

    /// Reads the whole lines another process appended since the last open or refresh (a
    /// `follow` transcript), numbering them as frames; a torn last piece is left for later.
    /// @return the new frames (held form), oldest first; `errc::conflict` when the file is now
    /// shorter than what was read (truncated: reopen it); `errc::io_error`.
    boost::system::result<std::vector<FramePtr>> refresh();

    /// Makes every appended frame durable (fdatasync) and writes the index records. The hub calls
    /// this at turn end and on a short timer. @return the OS reason of a failed sync or index
    /// write (system category).
    boost::system::result<void> sync();

    /// Frames in the file.
    std::uint64_t frame_count() const noexcept;

    /// Lines in the file (frames and other rows), torn tail excluded.
    std::uint64_t line_count() const noexcept;

    /// Bytes of complete lines in the file.
    std::uint64_t size_bytes() const noexcept;

    /// Bytes of a torn last line removed (or ignored, read-only) on open; 0 if none.
    std::uint64_t torn_bytes() const noexcept;

    /// The file's path.
    const std::filesystem::path& path() const noexcept;

    /// The sidecar index path of a transcript.
    static std::filesystem::path index_path(const std::filesystem::path& transcript);

    /// The window a resume hands over: the transcript cut to `budget` by the one cut (held whole
    /// when it fits cap + slack), read from the end: O(window) bytes. Its scan state is the
    /// file's, so live appends continue it. @return `errc::corrupt_data` for a line that is not
    /// JSON when strict (see `bad_line`), `errc::io_error`. `shed`, if given, receives what the cut
    /// shed: every frame below the window, and the thinking growth of the newest turn dropped
    /// within the region read (exact unless the newest turn is longer than cap + slack).
    boost::system::result<Window> load_window(const Budget& budget = {}, Shed* shed = nullptr);

    /// The newest `max_turns` turns (at most SUBSCRIBE_TURNS) of frames before position
    /// `before`, at most `max_bytes` wire bytes (always at least one frame), read backward from
    /// the nearest checkpoint: O(page). The oldest turn may start mid-turn when the byte bound
    /// binds; the cursor is then that frame. Never a gap, never a silent empty page: an empty
    /// page means nothing is older. @return errors as `load_window`.
    boost::system::result<Page> page(
        std::uint64_t before,
        std::size_t max_turns = SUBSCRIBE_TURNS,
        std::uint64_t max_bytes = CONVERSATION_CAP_BYTES);

    /// Where frame `pos` is in the file: (byte offset of its line, its length without the
    /// newline), found forward from the nearest checkpoint: O(checkpoint interval). The whole
    /// frame, as appended (an oversize frame is held elsewhere in reference form).
    /// @return `errc::not_found` past the last frame, `errc::io_error`.
    boost::system::result<std::pair<std::uint64_t, std::uint64_t>> frame_span(std::uint64_t pos);

    /// Frame `pos` whole (not its held form), as the JSON a page would carry: its line as
    /// appended for frame rows, the row its line translates to for a Codex rollout.
    /// @return errors as `frame_span` and `read_bytes`.
    boost::system::result<std::string> frame_json(std::uint64_t pos);

    /// Reads `n` bytes at `offset` of the file (a range of a `frame_span`).
    /// @return `errc::io_error` on a failed or short read.
    boost::system::result<std::string> read_bytes(std::uint64_t offset, std::uint64_t n) const;

    /// Every turn opening (positions), by a full forward scan: O(file). The scan also recounts
    /// the transcript (frames, lines, checkpoints, bad lines), as `build_index` does, unwritten.
    boost::system::result<std::vector<std::uint64_t>> openings();

    /// Rebuilds the index by a full forward scan (with turn openings) and writes it.
    boost::system::result<void> build_index();

    /// The line that made the last read fail, if one did (strict only).
    const std::optional<BadLine>& bad_line() const noexcept;

    /// Bad lines skipped by the reads so far (not strict), oldest found first; at most
    /// `TRANSCRIPT_BAD_LINES_KEPT` (see `bad_lines_total`). A full scan (`build_index`) finds
    /// them all.
    const std::vector<BadLine>& bad_lines() const noexcept;

    /// Bad lines skipped so far, kept or not.
    std::uint64_t bad_lines_total() const noexcept;

    /// Whether the index was valid on open (else the file was counted, validating every line).
    bool index_was_valid() const noexcept;

    /// Whether the numbering's start is known: counted on open, an index loaded, a read from
    /// the end that reached the file's start, or a `resolve`d count (see `end_relative`).
    bool counted() const noexcept;

    /// The position of the file's first frame (0 unless opened `end_relative` and the file was
    /// longer than a window). Meaningful once `counted()`.
    std::uint64_t origin() const noexcept;

    /// Starts the count of a transcript not yet `counted()` (its file up to the end it was
    /// opened at). @return the count to `step` and then `resolve`; `errc::conflict` when
    /// already counted; `errc::io_error`.
    boost::system::result<TranscriptCount> start_count() const;

    /// Takes a finished count: the numbering's start becomes known (`origin`), positions keep
    /// their values, the checkpoints below the window are added and the index is written
    /// (when writable). @return `errc::conflict` when the count does not number the frames
    /// read from the end as they were numbered (the file's start was rewritten since it was
    /// opened): the caller opens it again under a new epoch; `errc::bad_request` for a count
    /// not finished or of another opening; the index write's error.
    boost::system::result<void> resolve(TranscriptCount&& count);

private:
    struct Parts; // transcript_parts.hpp

    explicit Transcript(std::unique_ptr<Parts> parts) noexcept;
    /// Counts the whole file (the numbering from its start) and writes the index if kept.
    boost::system::result<void> count();
    /// Warms the turn scan at the end up from the newest frames (before the first append).
    boost::system::result<void> warm_scan();
    /// The full scan of `openings` and `build_index`: recounts everything, writes nothing.
    boost::system::result<void> rescan();
    /// A read from the end reached the file's start: renumber from there and count.
    boost::system::result<void> reached_start(std::uint64_t line_origin);
    /// `frame_span` not counted yet: back from the nearest known frame after `pos`.
    boost::system::result<std::pair<std::uint64_t, std::uint64_t>>
    frame_span_back(std::uint64_t pos);

    std::unique_ptr<Parts> parts_;
};

} // namespace sluice
