// FileSource: a seat over a session file someone else writes (Claude Code's own transcript) —
// opened at its first viewer or page on the writer (index and key in sluice's data dir, the file
// never written), followed by refreshes as it grows, opened again when truncated or replaced.
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/source.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::hub {

/// A read-only source over a foreign session file. Prompts, renames, settings, resets and
/// deletes are refused (conflict, FOREIGN_READ_ONLY). Confined to its seat's strand.
class FileSource final : public Source {
public:
    /// `file` as `listing` saw it; its index and key live in the seat's folder.
    FileSource(std::filesystem::path file, ForeignListing listing);

    /// What a seat over `listing` shows before it is opened: how the hub lists a foreign file it
    /// has not made a seat for yet.
    [[nodiscard]] static SeatSummary listed_summary(
        const SeatSpec& spec,
        const ForeignListing& listing,
        std::chrono::system_clock::time_point last_activity);

    [[nodiscard]] Kind kind() const noexcept override { return Kind::file; }

    void bind(SourceHost& host, std::weak_ptr<SourceHost> weak) override;

    void wanted() override { open(); }

    bool wait_open(std::function<void()> then) override;
    /// The file changed: its new whole rows are read on the writer and published in order; a
    /// truncated or replaced file is opened again under a new epoch.
    void changed() override;

    void head(FeedHead& /*head*/) const override {}

    void summarize(SeatSummary& s) const override;
    [[nodiscard]] Failure refusal() const override;
    void close() override;

    /// The listing as last seen (mtime, title, turns).
    [[nodiscard]] const ForeignListing& listing() const noexcept { return listing_; }

private:
    struct Opened; // what the open job hands back to the strand

    void open(bool reindex = false);
    void opened(const std::shared_ptr<Opened>& r);
    void read(bool replaced);
    void count(std::shared_ptr<std::optional<TranscriptCount>> count = nullptr);

    SourceHost* host_{nullptr};
    std::weak_ptr<SourceHost> weak_;
    std::filesystem::path file_; // the session file (never written)
    ForeignListing listing_;     // what its listing learned
    bool opened_{false}, opening_{false}, reading_{false}, again_{false};
    std::uint64_t ino_{}; // the inode opened (a different one at the path: replaced)
    std::string failed_;  // why it could not be opened
    std::optional<std::uint64_t> origin_; // the first frame's seq, once known (SeatSummary)
    std::vector<std::function<void()>> after_open_; // pages asked for before it opened
    std::shared_ptr<std::atomic<bool>> count_stop_; // set when the file is opened again
};

} // namespace sluice::hub
