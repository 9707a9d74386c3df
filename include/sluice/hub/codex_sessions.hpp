// Codex CLI's rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as read-only seats:
// the listing of one rollout and the inotify follower of the sessions folder.
#pragma once

#include <sluice/hub/claude_projects.hpp>

#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace sluice::hub {

/// Bytes read from the head of a rollout to list it. Basis: the first prompt's row follows the
/// session meta (~21 KiB with codex's default instructions), the developer message (~7 KiB), the
/// environment context, the world state and the turn context (~8 KiB): ~40 KiB in a default
/// codex 0.169.0 run (tests/fixtures/codex/README.md), so 3x that. A rollout whose first prompt
/// lies deeper is listed untitled until it is opened or grows (then listed again).
inline constexpr std::size_t CODEX_LIST_HEAD_BYTES = 128 * 1024;

/// Folder levels below a sessions folder down to its rollouts: YYYY / MM / DD.
inline constexpr int CODEX_SESSIONS_DEPTH = 3;

/// What a Codex seat answers to a prompt, a rename or a delete (409).
inline constexpr std::string_view CODEX_READ_ONLY =
    "read-only: a Codex session on this machine (continuing one is not supported yet)";

/// Parses what a listing read of a rollout: `head`, its first bytes (`whole` when that is the
/// whole file). The project is the session meta's `cwd`, the title the first prompt a person
/// typed (not the environment context codex sends first), trimmed as `trim_title`; the turns
/// are counted when `whole`. Pure; a partial last line is ignored.
[[nodiscard]] ForeignListing parse_rollout_listing(std::string_view head, bool whole);

/// Whether `name` is a rollout's file name: `rollout-<date>T<time>-<thread uuid>.jsonl`.
[[nodiscard]] bool is_rollout_file_name(std::string_view name);

/// The thread id in a rollout's file name (its last 36 characters before `.jsonl`); empty when
/// `name` is not a rollout's.
[[nodiscard]] std::string rollout_session_id(std::string_view name);

/// The seat id of a Codex thread (stable across restarts, apart from Claude's `c-…`).
[[nodiscard]] std::string codex_seat_id(std::string_view thread_id);

/// Serves every rollout under some Codex sessions folders as seats of a hub, and follows them:
/// one inotify descriptor on the io_context, with a watch on each folder and on each year, month
/// and day folder in it (new ones are watched as they appear), so appended rows reach
/// subscribers and new rollouts appear as seats. Never writes under the folders.
///
/// @par Thread safety
/// Construct and `start` once, on any thread before the io_context runs; the watch runs on its
/// own strand afterwards.
class CodexSessions {
public:
    /// Follows `dirs` for `hub`. Nothing is read until `start`.
    CodexSessions(boost::asio::io_context& io, Hub& hub, std::vector<std::filesystem::path> dirs);
    ~CodexSessions();
    CodexSessions(const CodexSessions&) = delete;
    CodexSessions& operator=(const CodexSessions&) = delete;

    /// Lists every rollout as a seat and starts following. @return seats listed.
    std::size_t start();

    /// Stops following (the watch descriptor is closed).
    void stop();

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

} // namespace sluice::hub
