// Hub: the registry of seats — create, find, list, delete, restore from the data directory.
#pragma once

#include <sluice/hub/archives.hpp>
#include <sluice/hub/async.hpp>
#include <sluice/hub/failure.hpp>
#include <sluice/hub/hooks.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/spend_limits.hpp>
#include <sluice/hub/subagents.hpp>
#include <sluice/hub/turn_durations.hpp>
#include <sluice/hub/usage_ledger.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::hub {

class SearchIndexer;

/// Hub-wide settings.
struct HubConfig {
    std::filesystem::path data_dir{"sluice-data"}; ///< one folder per seat under `seats/`
    std::filesystem::path seats_dir{};  ///< the seats' folders, when not `<data_dir>/seats`
    AgentFactory make_agent;            ///< builds a seat's agent
    std::size_t max_seats{1000};        ///< more is refused (503)
    std::size_t max_queued_prompts{16}; ///< per seat; more is refused (503)
    std::chrono::milliseconds sync_interval{500}; ///< transcript fsync timer while a turn runs
    conversation_budget budget{};                 ///< the seats' window budget
    std::shared_ptr<Broker> broker{};             ///< the cluster engine (`--redis`), or null
    std::shared_ptr<const PriceTable> prices{};   ///< usage prices (null: the shipped table)
    std::filesystem::path search_index{};         ///< the search index's file (empty: no search)
    bool search_thinking{false};                  ///< index assistant thinking too
    std::shared_ptr<Notifier> notifier{};         ///< told of events that need a person, or null
    /// Turns that ran at least this long tell the notifier when they end or fail.
    std::chrono::milliseconds notify_long_turn{NOTIFY_LONG_TURN_DEFAULT};
    std::shared_ptr<SpendLimits> limits{}; ///< budgets (null: seats' own budgets only)
};

/// Totals over every seat, for /metrics and /v1/stats.
struct HubStats {
    std::uint64_t seats{};                 ///< seats hosted
    std::uint64_t running{};               ///< seats with a turn running
    std::uint64_t subscribers{};           ///< live subscribers
    std::uint64_t window_frames{};         ///< frames held in windows
    std::uint64_t window_bytes{};          ///< wire bytes held in windows
    std::uint64_t frames_total{};          ///< frames in every conversation
    std::uint64_t preview_dropped_bytes{}; ///< preview bytes dropped for subscribers
    std::uint64_t resyncs{};               ///< subscribers resynced with `connected`
    std::uint64_t write_errors{};          ///< failed transcript and metadata writes
    std::uint64_t degraded{};              ///< seats degraded (a failed write, or read-only)
};

/// Limits on a seat's spec, checked by `Hub::create` (each refusal names its field and limit).
inline constexpr std::size_t SEAT_NAME_MAX_BYTES = 200;
/// Most bytes of a model name.
inline constexpr std::size_t SEAT_MODEL_MAX_BYTES = 200;
/// Most bytes of a system prompt override.
inline constexpr std::size_t SEAT_SYSTEM_MAX_BYTES = 64 * 1024;

/// The registry of seats. Owns the writer (one thread) that does every seat's disk work.
///
/// @par Thread safety
/// Safe from any thread (a mutex guards the map; no I/O is done under it).
class Hub {
public:
    /// A hub whose seats run on `io`.
    Hub(boost::asio::io_context& io, HubConfig config);
    ~Hub();
    Hub(const Hub&) = delete;
    Hub& operator=(const Hub&) = delete;

    /// Brings back every seat found in the data directory (idle). Never throws and never
    /// stops at one seat: a seat that cannot be restored (damaged meta.json, unreadable
    /// transcript) or whose agent kind this hub lacks is listed `unavailable` with its reason
    /// (its history readable when its transcript is, its folder removable). Returns how many
    /// seats are listed.
    std::size_t restore();

    /// Creates a seat. Nothing is made on disk before the spec is valid; a create that fails
    /// half-way removes what it made. Failures name the reason: bad_request (the field and its
    /// limit), overloaded (the seat limit), io_error (the file and the OS reason),
    /// (or bad_request when the agent kind is not available here, and why).
    /// @par Blocking
    /// The new seat's folder and first meta.json (safe_write: two fsyncs) are made on the
    /// calling thread, before the seat exists; every later write of the seat goes to the writer.
    Result<std::shared_ptr<Seat>> create(SeatSpec spec);

    /// What the asynchronous `create` hands back.
    using CreateDone = std::function<void(Result<std::shared_ptr<Seat>>)>;

    /// Creates a seat as above, but every disk step (its folder, first meta.json, transcript)
    /// runs on the writer, never on the calling (I/O) thread; `done` runs on `ex`. Refusals of
    /// the spec are decided first, touching nothing; overloaded when the writer queue is full.
    void create(SeatSpec spec, const boost::asio::any_io_executor& ex, CreateDone done);

    /// Lists a foreign session file as a read-only seat, unless a seat of that id is listed
    /// already. Only its listing is kept (a few hundred bytes: 10,000 files fit the listing
    /// benchmark's 64 MiB): the seat itself (Seat::open_fed over a FileSource; its index and key in
    /// `<data>/foreign/<id>/`) is made when `find` first asks for it. Foreign seats do not count
    /// against `max_seats`. @return its id, or nullopt when the id is taken by another file or
    /// by a seat of sluice's own (the same file listed again: its id, the listing brought up to
    /// date or its seat told that the file changed).
    std::optional<std::string> add_foreign(std::filesystem::path file, ForeignListing listing);

    /// The seat of the terminal session a Claude Code hook reported (`c-<session id>`), listed
    /// now from the hook's `transcript_path` when the projects watch has not listed it (a
    /// session whose file is not written yet, or a hub without `--claude-projects`): only a
    /// file named `<session id>.jsonl`. not_found when there is no such session here.
    Result<std::shared_ptr<Seat>> hooked_seat(const HookCall& call);

    /// The foreign session file listed as `id` changed (a watch saw it): its seat reads its new
    /// rows (Seat::source_changed, on its strand), or, while it is only listed, its listing is
    /// brought up to date (relist_if_changed: bounded reads, on the calling thread).
    void foreign_changed(std::string_view id);

    /// Continues a foreign session: a new hosted `claude` seat in the session's recorded cwd
    /// that resumes it (`--resume <session_id>`), made as the asynchronous `create` makes one,
    /// its transcript starting with the session's frames (so its history starts where the
    /// session's does; a one-off copy on the writer); the seat that already continues it, if
    /// one does (one conversation never forks into two seats). Refused (bad_request) when the
    /// cwd lies outside the workspace root, conflict when `id` is not a foreign seat, not_found
    /// when there is no such seat. `done` runs on `ex`.
    void
    continue_foreign(std::string_view id, const boost::asio::any_io_executor& ex, CreateDone done);

    /// The hosted claude seat that continues foreign seat `id` (resumes its session), or null.
    [[nodiscard]] std::shared_ptr<Seat> continued_seat(std::string_view id) const;

    /// What `subagents` hands back.
    using SubagentsDone = std::function<void(Result<std::vector<Subagent>>)>;

    /// The sub-agent transcripts of foreign seat `id` (list_subagents, on the writer); `done`
    /// runs on `ex`. not_found when there is no such seat, conflict when it is not foreign.
    void subagents(std::string_view id, const boost::asio::any_io_executor& ex, SubagentsDone done);

    /// What `subagent_history` hands back: a page's JSON (wire::page_json).
    using PageDone = std::function<void(Result<std::string>)>;

    /// A page of sub-agent `agent` of foreign seat `id`, the shape of a seat's history: the
    /// newest `turns` turns before frame `before` (default: its end), read from its file
    /// (read-only, no index kept) on the writer; `done` runs on `ex`. not_found for no such seat
    /// or sub-agent, conflict when the seat is not foreign.
    void subagent_history(
        std::string_view id,
        std::string_view agent,
        std::optional<std::uint64_t> before,
        std::size_t turns,
        const boost::asio::any_io_executor& ex,
        PageDone done);

    // ---- asynchronous forms: what the server awaits ----------------------------------------
    // The calls above as Asio completion-token operations: `done` completes the token on the
    // caller's executor (a route `co_await`s `hub.async_create(spec, use_awaitable)`; under
    // GCC 12 it awaits a named operation). The hub must outlive the operation.

    /// `create`: void(Result<std::shared_ptr<Seat>>).
    template <class Token>
    auto async_create(SeatSpec spec, Token&& token) {
        return detail::async_call<Result<std::shared_ptr<Seat>>>(
            [this, spec = std::move(spec)](const auto& ex, CreateDone done) mutable {
                create(std::move(spec), ex, std::move(done));
            },
            std::forward<Token>(token));
    }

    /// `continue_foreign`: void(Result<std::shared_ptr<Seat>>).
    template <class Token>
    auto async_continue_foreign(std::string id, Token&& token) {
        return detail::async_call<Result<std::shared_ptr<Seat>>>(
            [this, id = std::move(id)](const auto& ex, CreateDone done) {
                continue_foreign(id, ex, std::move(done));
            },
            std::forward<Token>(token));
    }

    /// `subagents`: void(Result<std::vector<Subagent>>).
    template <class Token>
    auto async_subagents(std::string id, Token&& token) {
        return detail::async_call<Result<std::vector<Subagent>>>(
            [this, id = std::move(id)](const auto& ex, SubagentsDone done) {
                subagents(id, ex, std::move(done));
            },
            std::forward<Token>(token));
    }

    /// `subagent_history`: void(Result<std::string>).
    template <class Token>
    auto async_subagent_history(
        std::string id,
        std::string agent,
        std::optional<std::uint64_t> before,
        std::size_t turns,
        Token&& token) {
        return detail::async_call<Result<std::string>>(
            [this, id = std::move(id), agent = std::move(agent), before, turns](
                const auto& ex, PageDone done) {
                subagent_history(id, agent, before, turns, ex, std::move(done));
            },
            std::forward<Token>(token));
    }

    /// The seat with this id, or nullptr. A foreign session file only listed so far becomes a
    /// seat here (at its first viewer, page or look-up), showing what its listing showed.
    [[nodiscard]] std::shared_ptr<Seat> find(std::string_view id);

    /// Every seat made so far, oldest first (foreign files only listed are not among them).
    [[nodiscard]] std::vector<std::shared_ptr<Seat>> list() const;

    /// What GET /v1/seats lists: every seat's summary, sluice's own oldest first, then the
    /// foreign session files in the order they were listed (from their listing while no seat
    /// is made for them: Seat::listed_summary), but those a hosted seat continues (listed once,
    /// as that seat).
    [[nodiscard]] std::vector<SeatSummary> summaries() const;

    /// The names of the seat folders in the seats directory (ids only; nothing is opened).
    [[nodiscard]] std::vector<std::string> folder_ids() const;

    /// As above, listed on the writer (never on an I/O thread); `done` runs on `ex`.
    void folder_ids(
        const boost::asio::any_io_executor& ex,
        std::function<void(Result<std::vector<std::string>>)> done);

    /// Opens seat `id` from its folder in the seats directory, as `restore` would, and lists it
    /// in place of a mirror of that id (whose viewers' streams end). Scale-out with shared
    /// storage: the node that took the seat's lease over hosts it. The disk work runs on the
    /// writer; `done` runs on `ex`: not_found when the folder has no meta.json (deleted),
    /// conflict when this hub hosts the seat already.
    void adopt(const std::string& id, const boost::asio::any_io_executor& ex, CreateDone done);

    /// Stops hosting a seat without touching its folder (scale-out with shared storage: this
    /// node lost the seat's lease and must stop writing it): cancels its turn, syncs its
    /// transcript, ends its subscribers, and lists a seat fed by `placeholder` in its place (a
    /// mirror of the node that holds it now: the engine tells it where the seat went).
    /// @return false when `id` is not hosted here.
    bool release(std::string_view id, std::unique_ptr<Source> placeholder);

    /// Removes a seat: cancels its turn, ends its subscribers, and moves its folder under
    /// archive_root() (named by archived_folder_name), or with `purge` deletes it.
    boost::system::result<void> remove(std::string_view id, bool purge = false);

    /// Where removed seats' folders go: `archive/` beside the seats directory.
    [[nodiscard]] std::filesystem::path archive_root() const;

    /// Where what removed seats spent on their latest day is kept (`removed_spend.json` in the
    /// data dir; SpendLimits::removed).
    [[nodiscard]] std::filesystem::path removed_spend_file() const;

    /// Disk use: each hosted seat's folder, and the archive root's, in bytes.
    struct DiskUse {
        std::vector<std::pair<std::string, std::uint64_t>> seats; ///< seat id, bytes
        std::uint64_t archive_bytes{};                            ///< removed seats kept
    };

    /// Called with the disk use, or with none when the writer's queue is full.
    using DiskUseDone = std::function<void(std::optional<DiskUse>)>;

    /// Walks the folders on the writer (blocking file metadata reads, a few per seat, never on
    /// an I/O thread); `done` runs on `ex`, with none at once when the writer's queue is full.
    void disk_use(const boost::asio::any_io_executor& ex, DiskUseDone done) const;

    /// `disk_use`: void(std::optional<DiskUse>).
    template <class Token>
    auto async_disk_use(Token&& token) const {
        return detail::async_call<std::optional<DiskUse>>(
            [this](const auto& ex, DiskUseDone done) { disk_use(ex, std::move(done)); },
            std::forward<Token>(token));
    }

    /// Removes reset archives and removed seats' folders older than `max_age` (prune_archives),
    /// on the writer; `done` runs on `ex` (not called when the writer's queue is full).
    void prune_archives(
        std::chrono::seconds max_age,
        const boost::asio::any_io_executor& ex,
        std::function<void(Pruned)> done);

    /// Lists a seat of another node's fed by `source` (scale-out: cluster::MirrorSource), or
    /// returns the seat already listed under that id (`source` is then dropped).
    std::shared_ptr<Seat> add_mirror(SeatSpec spec, std::unique_ptr<Source> source);

    /// Unlists a mirror (its owner dropped the seat): its viewers' streams end.
    void remove_mirror(std::string_view id);

    /// Stops every seat (cancels turns, syncs transcripts, ends subscriber streams).
    void shutdown();

    /// Totals over every seat.
    [[nodiscard]] HubStats stats() const;

    /// How long this hub's turns ran (every seat's), for /metrics.
    [[nodiscard]] const TurnDurations& turn_durations() const noexcept { return *turn_durations_; }

    /// The usage ledger (GET /v1/usage, /metrics): fed by hosted seats' result rows and by the
    /// Claude Code sessions' scanner (ClaudeProjects).
    [[nodiscard]] const std::shared_ptr<UsageLedger>& usage() const noexcept { return usage_; }

    /// The search index's feeder (GET /v1/search), or null when the hub keeps none: fed by
    /// hosted seats' durable frames and by the Claude Code sessions' follow (ClaudeProjects).
    [[nodiscard]] const std::shared_ptr<SearchIndexer>& search() const noexcept { return search_; }

    /// Why the hub keeps no search index though one was asked for (its file cannot be made: a
    /// read-only data dir, a full disk), or "". The hub serves without it.
    [[nodiscard]] const std::string& search_off() const noexcept { return search_off_; }

    /// The seats' budgets and the hub's daily one (never null).
    [[nodiscard]] const std::shared_ptr<SpendLimits>& limits() const noexcept { return limits_; }

private:
    [[nodiscard]] SeatOptions seat_options(std::filesystem::path dir) const;
    [[nodiscard]] std::filesystem::path seats_root() const;
    std::shared_ptr<Seat> open_folder(const std::filesystem::path& dir);
    [[nodiscard]] std::optional<Failure> check_spec(SeatSpec& spec) const;
    // `history`: a foreign session file whose frames the new seat's transcript starts with.
    Result<std::shared_ptr<Seat>>
    make_seat(SeatSpec spec, const std::filesystem::path& history = {});
    void make_on_writer(
        SeatSpec spec,
        const boost::asio::any_io_executor& ex,
        CreateDone done,
        std::filesystem::path history = {});
    void add(std::shared_ptr<Seat> seat);

    boost::asio::io_context& io_;
    HubConfig config_;
    std::shared_ptr<Writer> writer_; // one thread for this data dir
    std::shared_ptr<TurnDurations> turn_durations_{std::make_shared<TurnDurations>()};
    std::shared_ptr<UsageLedger> usage_;
    std::shared_ptr<SearchIndexer> search_; // null without config_.search_index
    std::string search_off_;                // why search_ is null though it was asked for
    std::shared_ptr<SpendLimits> limits_;
    mutable std::mutex mu_;
    std::vector<std::shared_ptr<Seat>> order_;
    std::unordered_map<std::string, std::shared_ptr<Seat>> seats_;
    std::size_t foreign_seats_{}; // of seats_, those over foreign session files

    // A foreign session file: its listing until a seat is made for it (then `seat`).
    struct Listed {
        std::filesystem::path file;
        ForeignListing listing;
        std::string epoch; // the epoch it is listed under, the seat's until opened
        std::chrono::system_clock::time_point last_activity;
        std::shared_ptr<Seat> seat;
        std::shared_ptr<SubagentIndex> subagents; // made at the first sub-agent request
    };

    // The sub-agent index of foreign seat `id` (made at its first use), or why there is none.
    [[nodiscard]] Result<std::shared_ptr<SubagentIndex>> foreign_subagents(std::string_view id);
    // Runs `job` on the writer, then `done` on `ex` (overloaded when the queue is full).
    template <class T>
    void on_writer(
        std::function<Result<T>()> job,
        const boost::asio::any_io_executor& ex,
        std::function<void(Result<T>)> done);
    [[nodiscard]] static SeatSpec foreign_spec(const std::string& id, const Listed& l);
    std::unordered_map<std::string, Listed> foreign_; // id → listed file (guarded by mu_)
    std::vector<std::string> foreign_order_;          // their ids, in listing order
};

} // namespace sluice::hub
