// UsageScanner: Claude Code session files (and their sub-agents' files) counted into the usage
// ledger by one background thread of low priority, each file read once from where it was left.
#pragma once

#include <sluice/hub/backlog.hpp>
#include <sluice/hub/usage_ledger.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sluice::hub {

/// Bytes the scanner reads at a time. Basis: big enough that a read costs one syscall per MiB,
/// small enough that `stop` is seen within a few ms.
inline constexpr std::size_t USAGE_SCAN_CHUNK_BYTES = 1 << 20;
/// A line longer than this is skipped unread (Claude Code's usage rows are a few KiB; a longer
/// line carries pasted images or file contents, never a second usage object).
inline constexpr std::size_t USAGE_SCAN_LINE_MAX_BYTES = 16 << 20;
/// Session files waiting to be scanned at most; a change beyond it is dropped (the file's next
/// change asks again). Basis: the listing benchmark's 10,000 files, twice.
inline constexpr std::size_t USAGE_SCAN_QUEUE_MAX = 20'000;

/// Counts Claude Code sessions into a ledger under their seat ids (foreign_seat_id), as
/// ClaudeUsageCounter counts: a session's own file `<project>/<id>.jsonl` and its sub-agents'
/// `<project>/<id>/subagents/*.jsonl`, each read from the offset it was read to (never from its
/// start again), on the scanner's own thread, never on a seat's strand or the writer. A file
/// that was truncated or replaced takes its session's figures back and is read again.
///
/// Memory: per session its offsets, the ledger cells it added (days × models) and
/// USAGE_DEDUP_IDLE messages once read to the end; one chunk and one line in flight.
///
/// @par Thread safety
/// `changed`, `wait_idle` and `stop` are safe from any thread.
class UsageScanner {
public:
    /// A scanner feeding `ledger`; its thread starts now.
    explicit UsageScanner(std::shared_ptr<UsageLedger> ledger);
    ~UsageScanner();
    UsageScanner(const UsageScanner&) = delete;
    UsageScanner& operator=(const UsageScanner&) = delete;

    /// Session file `file` appeared or changed: it (and its sub-agents' files) will be read from
    /// where they were left. Never blocks on I/O; dropped when USAGE_SCAN_QUEUE_MAX wait.
    void changed(const std::filesystem::path& file);

    /// Blocks until nothing waits and nothing is being read (tests, and shutdown order).
    void wait_idle();

    /// Stops the thread (what is queued is dropped). Idempotent.
    void stop();

private:
    struct FileAt {
        std::uint64_t dev{}, ino{}, offset{};
    };
    struct Session;

    // The backlog's task for `file`.
    void scan_queued(const std::filesystem::path& file);
    void scan(const std::filesystem::path& file);
    // Reads `path` of `s` from its offset; false when it was truncated or replaced.
    bool read_file(Session& s, const std::filesystem::path& path);
    void take_back(Session& s);

    std::shared_ptr<UsageLedger> ledger_;
    std::mutex mu_;
    std::unordered_set<std::string> queued_; // files whose task waits (guarded by mu_)
    // Touched by the backlog's thread only.
    std::unordered_map<std::string, std::unique_ptr<Session>> sessions_;
    Backlog backlog_; // last: its thread stops before what its tasks use goes
};

} // namespace sluice::hub
