// Claude Code's own session files (`~/.claude/projects/**.jsonl`) as read-only seats: listing
// from bounded heads and tails, the index key kept in sluice's data dir, the inotify follower.
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::hub {

class Hub;

/// Bytes read from the head of a session file to list it. Basis: a session's first rows (summary
/// rows, its cwd, the first prompt) fit in a few KiB in every fixture; 10,000 files then read
/// at most 480 MiB, far less in practice (most files are smaller than head + tail).
inline constexpr std::size_t FOREIGN_LIST_HEAD_BYTES = 32 * 1024;
/// Bytes read from the tail of a session file to list it (newer title and summary rows).
inline constexpr std::size_t FOREIGN_LIST_TAIL_BYTES = 16 * 1024;
/// Bytes of a title (cut at a UTF-8 boundary, then "…").
inline constexpr std::size_t FOREIGN_TITLE_MAX_BYTES = 120;
/// Most bytes read at once to count a session file's turns beyond its head and tail: a file
/// larger than a listing's head + tail is counted whole up to this size, and what is appended
/// to a counted file is counted up to this much at a time; past it the turns are unknown
/// (`null`) until the seat is opened. Basis: at most one such read per listing or per change,
/// of a size a read takes milliseconds for; it bounds the transient buffer too.
inline constexpr std::size_t FOREIGN_COUNT_STEP_BYTES = 4 * 1024 * 1024;
/// Most bytes all listings of one hub read to count whole files larger than head + tail (what
/// was appended to a counted file is not charged: it costs what was written). Basis: 10,000
/// session files then cost at most this, about a second of counting, on top of their heads and
/// tails; the files listed after it is spent show unknown turns until opened.
inline constexpr std::uint64_t FOREIGN_COUNT_BUDGET_BYTES = 256ULL * 1024 * 1024;
/// A session is `live` when its file was written this recently.
inline constexpr std::chrono::seconds FOREIGN_LIVE_FOR{60};
/// What a foreign seat answers to a prompt, a rename or a delete (409).
inline constexpr std::string_view FOREIGN_READ_ONLY =
    "read-only: a Claude Code session on this machine; continue it to send";

/// What a listing learns of one session file from its head and tail.
struct ForeignListing {
    /// How its lines are read: Claude Code's rows (`frames`) or a Codex rollout's.
    RowFormat format{RowFormat::frames};
    std::string session_id;             ///< from the file name (`<session>.jsonl`)
    std::string project;                ///< the `cwd` its rows carry (empty: none seen)
    std::string title;                  ///< custom/ai title or summary row, else first prompt
    std::optional<std::uint64_t> turns; ///< known when the whole file was counted
    /// While `turns` is known: the bytes it counts (through the last whole line read) and the
    /// turn scan's state there, so a grown file is counted from there (count_appended).
    std::uint64_t counted{};
    TurnScan scan;                                 ///< (see `counted`)
    std::uint64_t size{};                          ///< bytes, when listed
    std::chrono::system_clock::time_point mtime{}; ///< last written, when listed
};

/// Parses what a listing read: `head` (the file's first bytes; `whole` when that is the whole
/// file) and `tail` (its last bytes, may overlap the head). Pure: the listing's rules, tested
/// on the fixtures. Partial lines at the cut edges are ignored.
[[nodiscard]] ForeignListing
parse_listing(std::string_view head, std::string_view tail, bool whole);

/// Turns opening in `jsonl` (whole lines; a last line without a newline counted too), as
/// `TurnScan` over `Frame::parse` of every line counts them, but reading only the fields the
/// scan needs of each row (no JSON DOM of it): what a listing of a whole small file costs.
[[nodiscard]] std::uint64_t count_turns(std::string_view jsonl);

/// A title made fit for a list: whitespace runs collapsed, trimmed, at most
/// FOREIGN_TITLE_MAX_BYTES (cut at a UTF-8 boundary, then "…").
[[nodiscard]] std::string trim_title(std::string_view text);

/// Counts the turns of a file larger than a listing's head + tail whose `listing` has none yet:
/// read whole when it is at most FOREIGN_COUNT_STEP_BYTES and FOREIGN_COUNT_BUDGET_BYTES is not
/// spent; else its turns stay unknown.
/// @par Thread safety
/// Safe from any thread; blocking (one read).
void count_larger_file(const std::filesystem::path& file, ForeignListing& listing);

/// Counts the turns in what was appended to `file` since `listing` was counted, up to
/// `listing.size` (whole lines; at most FOREIGN_COUNT_STEP_BYTES read), so a growing session's
/// turns stay known while it is not opened. Turns unknown stay so; they become unknown when more
/// than that was appended or the read fails.
/// @par Thread safety
/// Safe from any thread; blocking (one read).
void count_appended(const std::filesystem::path& file, ForeignListing& listing);

/// Lists one session file by bounded reads (FOREIGN_LIST_HEAD_BYTES + FOREIGN_LIST_TAIL_BYTES
/// at most, and count_larger_file's; a Codex rollout, `format` codex_rollout: its head of
/// CODEX_LIST_HEAD_BYTES, parsed by parse_rollout_listing). @return nullopt when it cannot be
/// read or is not a session file.
/// @par Thread safety
/// Safe from any thread; blocking (two reads).
[[nodiscard]] std::optional<ForeignListing>
list_session_file(const std::filesystem::path& file, RowFormat format = RowFormat::frames);

/// The `source` a foreign seat of `listing` shows: "claude" or "codex".
[[nodiscard]] std::string_view foreign_source(const ForeignListing& listing) noexcept;

/// Brings `listing` up to date after `file` changed: unchanged when its size is; listed again
/// (list_session_file, in its format) while it lacks a project or a title; else its size kept and
/// what was appended counted (count_appended; a file that shrank: turns unknown). @return whether
/// anything changed.
/// @par Thread safety
/// Safe from any thread; blocking (a stat, and at most the two reads of a listing).
bool relist_if_changed(const std::filesystem::path& file, ForeignListing& listing);

/// Whether `name` is a session file's name (`<uuid-like id>.jsonl`, not `agent-*.jsonl`, the
/// old sub-agent layout).
[[nodiscard]] bool is_session_file_name(std::string_view name);

/// The seat id of a session (derived from its id, stable across restarts).
[[nodiscard]] std::string foreign_seat_id(std::string_view session_id);

/// Serves every session file under some Claude Code projects folders as seats of a hub, and
/// follows them: one inotify descriptor on the io_context (watches on each folder and each
/// project folder in it), so appended rows reach subscribers and new files appear as seats.
///
/// @par Thread safety
/// Construct and `start` once, on any thread before the io_context runs; the watch runs on its
/// own strand afterwards.
class ClaudeProjects {
public:
    /// Follows `dirs` for `hub`. Nothing is read until `start`.
    ClaudeProjects(boost::asio::io_context& io, Hub& hub, std::vector<std::filesystem::path> dirs);
    ~ClaudeProjects();
    ClaudeProjects(const ClaudeProjects&) = delete;
    ClaudeProjects& operator=(const ClaudeProjects&) = delete;

    /// Lists every session file as a seat and starts following. @return seats listed.
    /// Never writes under any of `dirs`.
    std::size_t start();

    /// Stops following (the watch descriptor is closed).
    void stop();

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

} // namespace sluice::hub
