// Journal: the only writer of a hosted seat's folder — the transcript appended on the hub's writer
// (durable before published), seq and epoch kept in meta.json, syncs, reset archives, and the
// `degraded` state a failed write leaves.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/core/error.hpp>
#include <sluice/hub/failure.hpp>
#include <sluice/hub/seat_meta.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/container/deque.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::hub {

/// What a journal tells its owner, on the owner's strand.
class JournalEvents {
public:
    JournalEvents() = default;
    JournalEvents(const JournalEvents&) = delete;
    JournalEvents& operator=(const JournalEvents&) = delete;
    JournalEvents(JournalEvents&&) = delete;
    JournalEvents& operator=(JournalEvents&&) = delete;
    virtual ~JournalEvents() = default;

    /// The first `appended` frames of `batch` are in the transcript, in order: they may be
    /// published now (durable before published). `ec` says why the rest are not (the journal is
    /// degraded then, and nothing after them is appended); no more batches follow an error.
    virtual void
    on_durable(std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) = 0;

    /// A write failed (the journal may now be degraded): the owner's figures changed.
    virtual void on_write_failed() = 0;
};

/// One seat's transcript and metadata on disk. Appends, syncs, metadata writes and reset
/// archives run on the hub's writer thread, in order, and complete on the owner's strand; a
/// batch of frames is appended at a time (the next ones wait behind it). The first failed write
/// marks the journal degraded: nothing more is appended, the reason is kept and every later
/// append is refused. A crash between an archive and the metadata that names the new epoch is
/// finished at the next `open`.
///
/// @par Thread safety
/// Confined to its strand but for `open`, `open_read_only` (blocking, before the journal is
/// shared) and the Store, which writer jobs share under its mutex.
class Journal : public std::enable_shared_from_this<Journal> {
public:
    using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;
    struct Store; // the transcript as writer jobs share it (src/hub/journal_store.hpp)

    /// A journal of seat `seat` (named in its log lines) in the folder `dir` (which must exist;
    /// empty: a seat with nothing on this node's disk), its jobs on `writer`, completing on
    /// `strand`; while a turn runs, the transcript is synced every `sync_interval`.
    static std::shared_ptr<Journal> make(
        std::string seat,
        strand_type strand,
        std::shared_ptr<Writer> writer,
        std::filesystem::path dir,
        std::chrono::milliseconds sync_interval);

    /// Who is told of appends and failures (held weakly: the owner owns the journal).
    void bind(std::weak_ptr<JournalEvents> events) { events_ = std::move(events); }

    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;
    Journal(Journal&&) = delete;
    Journal& operator=(Journal&&) = delete;
    ~Journal();

    // ---- opening (blocking: at creation or restore only) ---------------------------------

    /// Opens the transcript and reads its window. Before anything is served: a reset the hub
    /// left half-done (its archive there, meta.json not yet at the new epoch) is finished; damaged
    /// lines are skipped and listed (the index rebuilt, the frames numbered again); when the
    /// transcript may hold fewer frames than were published (the persisted high-water mark, or
    /// unsynced frames and a reboot since) the epoch in `spec` changes; a turn a crash left open
    /// is closed (TurnClose rows, "interrupted", written and held). A read-only data directory
    /// opens read-only (see `read_only`). @return the window, or why the transcript cannot be
    /// opened or read.
    Result<Window> open(SeatSpec& spec, Budget budget);

    /// Opens the transcript read-only (a seat with no agent): its window, or none when it cannot
    /// be read. Nothing is written.
    std::optional<Window> open_read_only(Budget budget);

    /// Serves `t`, a transcript someone else writes (a foreign session file), read-only.
    void adopt(Transcript t);

    /// The transcript as writer jobs share it (null until opened; a file source reads it).
    [[nodiscard]] const std::shared_ptr<Store>& store() const noexcept { return store_; }

    // ---- appends -------------------------------------------------------------------------

    /// Queues a frame for the transcript (its full form: the window holds the reference form of
    /// an oversize one). Sent in the next batch, unless `hold` is on.
    void append(FramePtr frame);

    /// Puts a frame ahead of every frame still queued (a reset's first frame).
    void prepend(FramePtr frame);

    /// Sends what is queued: one batch in flight at a time, unless `force` (a close, or a reset
    /// taking the old epoch's last frames: the writer runs jobs in order, so it still lands
    /// after the batch in flight).
    void flush(bool force = false);

    /// While on, no batch is sent but by `flush(true)` (a reset waits for the batches in flight;
    /// what is queued meanwhile belongs to the new epoch).
    void hold(bool on) noexcept { held_ = on; }

    /// Frames queued and not yet sent.
    [[nodiscard]] std::size_t queued() const noexcept { return pending_.size(); }

    /// Whether frames are queued or on the writer.
    [[nodiscard]] bool busy() const noexcept { return appending_ > 0 || !pending_.empty(); }

    /// Whether a batch is on the writer.
    [[nodiscard]] bool appending() const noexcept { return appending_ > 0; }

    // ---- metadata and syncs ----------------------------------------------------------------

    /// Writes `spec` as meta.json (safe_write), one write at a time: a newer spec asked for
    /// meanwhile is written after it.
    void save_meta(const SeatSpec& spec);

    /// Syncs the transcript if frames were appended since the last sync (or `clean`). `clean`:
    /// no turn runs and nothing waits: the high-water mark is exact then, so it goes to meta.json
    /// (from `spec`) and the unsynced marker goes away.
    void sync(const SeatSpec& spec, bool clean);

    /// While on, the transcript is synced every sync interval (a turn runs).
    void sync_periodically(bool on);

    /// Archives the transcript as `archived` (renamed, never deleted, after a sync), opens a new
    /// one and writes `spec` (the new epoch: the commit), all on the writer before any frame
    /// queued after this call. `done(ec, why)` on the strand.
    void archive(
        const SeatSpec& spec,
        std::string archived,
        std::function<void(boost::system::error_code, const std::string&)> done);

    /// Stops syncing, syncs clean (`sync(spec, true)`) and, with `remove`, on the writer after its
    /// last write: moves the folder to `archive_to` (its parents made), or deletes it when
    /// `archive_to` is empty.
    void close(const SeatSpec& spec, bool remove, std::filesystem::path archive_to = {});

    // ---- reading -------------------------------------------------------------------------

    /// The whole frame at `seq` as appended (an oversize frame's full form), shared with every
    /// client fetching the same frame (the last one fetched is kept). @pre `seq` was published.
    Result<std::shared_ptr<const std::string>> frame_text(std::uint64_t seq);

    /// Forgets the frame kept by `frame_text` (the numbering changed).
    void forget_frame_text() { frame_text_ = {}; }

    /// Reads the page of at most `turns` whole turns before `at` from the transcript, on the
    /// writer (in order with the appends), and hands its JSON to `done` on the strand.
    /// @return false when the writer queue is full (`done` is not called).
    bool read_page(
        std::uint64_t at,
        std::size_t turns,
        std::function<void(Result<std::shared_ptr<const std::string>>)> done);

    /// Runs `job` on the writer, `done` on the strand. @return false when its queue is full.
    bool submit(Writer::Job job, Writer::Done done);

    // ---- state ---------------------------------------------------------------------------

    /// Marks the journal degraded with `reason` (the first reason is kept); counts the error.
    void degrade(std::string reason, errc code = errc::io_error);

    /// Why nothing more can be written (read-only, degraded), if so.
    [[nodiscard]] std::optional<Failure> not_writable() const;

    /// The first write failure (empty: none).
    [[nodiscard]] const std::string& degraded() const noexcept { return degraded_; }

    /// Why the transcript is read-only (empty: writable).
    [[nodiscard]] const std::string& read_only() const noexcept { return read_only_; }

    /// Failed writes so far.
    [[nodiscard]] std::uint64_t write_errors() const noexcept { return write_errors_; }

    /// Damaged lines skipped when the transcript was read (never served).
    [[nodiscard]] const std::vector<BadLine>& warnings() const noexcept { return warnings_; }

private:
    Journal(
        std::string seat,
        strand_type strand,
        std::shared_ptr<Writer> writer,
        std::filesystem::path dir,
        std::chrono::milliseconds sync_interval);

    void recover(SeatSpec& spec, Window& window, bool renumbered);
    void appended(std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec);
    void arm_sync();
    void archived(
        boost::system::error_code ec,
        const std::string& why,
        const std::function<void(boost::system::error_code, const std::string&)>& done);

    std::string seat_;
    strand_type strand_;
    std::shared_ptr<Writer> writer_;
    std::filesystem::path dir_;
    std::chrono::milliseconds sync_interval_;
    std::weak_ptr<JournalEvents> events_;
    std::shared_ptr<Store> store_; // null until opened, or when the transcript is unreadable
    boost::container::deque<FramePtr> pending_; // frames waiting for the writer
    std::size_t appending_{0};                  // batches on the writer
    bool held_{false};
    bool dirty_{false};                 // appended since the last sync
    bool meta_writing_{false};          // one meta write in flight…
    std::optional<SeatSpec> meta_next_; // …and the newest spec to write after it
    bool syncing_{false}, sync_armed_{false};
    boost::asio::steady_timer sync_timer_;
    std::string degraded_;         // the first write failure
    errc degraded_code_{};         // its kind (insufficient_storage, read_only, io_error)
    std::string read_only_;        // why nothing can be written (empty: writable)
    std::uint64_t write_errors_{}; // failed writes
    std::vector<BadLine> warnings_;
    std::pair<std::uint64_t, std::shared_ptr<const std::string>> frame_text_; // the last fetched
};

} // namespace sluice::hub
