// SearchIndexer: the search index fed in the background — hosted seats' transcripts as frames
// become durable, Claude Code session files as the projects follow sees them change — each file
// read once, from the offset the index keeps.
#pragma once

#include <sluice/hub/async.hpp>
#include <sluice/hub/backlog.hpp>
#include <sluice/hub/search_index.hpp>
#include <sluice/hub/search_text.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace sluice::hub {

/// Files waiting to be indexed at most; a change beyond it is dropped (the file's next change
/// asks again, and it is read from its stored offset then). Basis: the listing benchmark's
/// 10,000 session files, twice; each entry is a path and a seat's names (~300 B).
inline constexpr std::size_t SEARCH_QUEUE_MAX = 20'000;
/// Bytes read at a time, and indexed in one transaction. Basis: one syscall and one commit per
/// MiB; a query waits for at most one such batch.
inline constexpr std::size_t SEARCH_CHUNK_BYTES = 1 << 20;
/// A line longer than this is skipped unread (a row carrying pasted images or whole files: its
/// frame still takes its seq).
inline constexpr std::size_t SEARCH_LINE_MAX_BYTES = 16 << 20;
/// Queries waiting or running at most; more are refused (overloaded). Basis: a query takes
/// milliseconds (bench/search_bench.py); 64 waiting is a burst no page or CLI makes.
inline constexpr std::size_t SEARCH_QUERIES_MAX = 64;

/// SQLite cache the indexer keeps when it goes idle; more is freed. Basis: a live seat's
/// appends touch a few dozen 4 KiB pages; a burst's read filled up to the 16 MiB cache (7.6 MB
/// after one 4 MB window, bench/RESULTS.md, issue 31), and 1 MiB kept was a quarter of one
/// window's bytes at one seat.
inline constexpr std::size_t SEARCH_CACHE_KEPT = 256 << 10;

/// What a file feeds: its seat, the epoch its frames are numbered in, the seat's source and
/// project, and whether the hub writes it (a hosted seat's transcript: a replaced file is a
/// reset, its old epoch archived) or someone else does (a replaced or truncated file is read
/// again, its old hits removed).
struct SearchTarget {
    std::string seat{};    ///< seat id
    std::string epoch{};   ///< the epoch (hosted seats; "" for files numbered by their reader)
    std::string source{};  ///< "sluice" or "claude"
    std::string project{}; ///< the working directory ("" when unknown)
    bool hosted{};         ///< the hub's own transcript
    bool archived{};       ///< a hosted seat's reset archive (`transcript.<epoch>.jsonl`)
};

/// How far indexing is: files read to their end of the files known, and files waiting.
struct SearchProgress {
    std::uint64_t done{};   ///< files read to their end
    std::uint64_t total{};  ///< files known
    std::uint64_t queued{}; ///< files waiting
    bool rebuilt{};         ///< the index was missing or damaged at start: rebuilt since
};

/// Feeds a SearchIndex from files, on its own thread of low priority: `changed` only queues (a
/// mutex, no I/O), so a seat's strand and the writer are never held; the thread reads what was
/// appended since the offset the index keeps (SEARCH_CHUNK_BYTES at a time, one transaction each,
/// the offset saved with the docs), numbers frame rows (seq) and turns, and indexes each frame's
/// indexed_text. A file found replaced (another inode) or truncated is read again from its
/// start: a hosted seat's old epoch is archived, a foreign file's old hits removed.
///
/// Memory: the queue (at most SEARCH_QUEUE_MAX entries), two chunks in flight (one read and
/// parsed, the one before it stored by a second thread), and a flag per known file; never what
/// was indexed.
///
/// @par Thread safety
/// Every member is safe from any thread; `search` blocks (SQLite): call it off I/O threads.
class SearchIndexer {
public:
    /// An indexer over the index at `db_file` (opened, or made anew when missing or damaged:
    /// then everything is read again as it is announced); its thread starts now.
    /// @throw std::runtime_error when no index can be made there.
    explicit SearchIndexer(const std::filesystem::path& db_file, SearchTextOptions opt = {});
    ~SearchIndexer();
    SearchIndexer(const SearchIndexer&) = delete;
    SearchIndexer& operator=(const SearchIndexer&) = delete;

    /// `file` of `target` appeared or grew: it will be read from where it was left. Never
    /// blocks on I/O; dropped when SEARCH_QUEUE_MAX files wait.
    void changed(const std::filesystem::path& file, SearchTarget target);

    /// Seat `seat` was removed: its hits go (on the thread, in order after what was queued).
    void remove_seat(std::string seat);

    /// Answers a query from what is indexed so far (blocking).
    [[nodiscard]] SearchPage search(const SearchQuery& q) const { return index_->search(q); }

    /// What the asynchronous `search` hands back: the page, or none when SEARCH_QUERIES_MAX
    /// queries wait already.
    using SearchDone = std::function<void(std::optional<SearchPage>)>;

    /// Answers `q` on the indexer's query thread (never on the caller's: SQLite blocks); `done`
    /// runs on `ex`, at once with none when too many queries wait.
    void search(SearchQuery q, const boost::asio::any_io_executor& ex, SearchDone done);

    /// `search` as an Asio operation: void(std::optional<SearchPage>).
    template <class Token>
    auto async_search(SearchQuery q, Token&& token) {
        return detail::async_call<std::optional<SearchPage>>(
            [this, q = std::move(q)](const auto& ex, SearchDone done) mutable {
                search(std::move(q), ex, std::move(done));
            },
            std::forward<Token>(token));
    }

    /// How far indexing is.
    [[nodiscard]] SearchProgress progress() const;

    /// Blocks until nothing waits and nothing is being read (tests, benches).
    void wait_idle();

    /// Stops the thread (what is queued is dropped: read again at the next change). Idempotent.
    void stop();

private:
    struct FileState {
        SearchTarget target; // the newest announced
        bool queued{};
        bool done{}; // read to its end
    };

    // The backlog's task for `file`: reads what it gained since it was queued.
    void index_queued(const std::string& file);
    // Reads what `file` gained; whether it was read to its end.
    bool index_file(const std::string& file, const SearchTarget& t);
    // Reads from `f`'s offset to `size` into the index; whether it got there.
    bool read_from(int fd, std::uint64_t size, SearchFile& f, SearchTarget& t);

    bool rebuilt_{}; // before index_: set by its construction
    std::unique_ptr<SearchIndex> index_;
    Writer queries_{SEARCH_QUERIES_MAX}; // the query thread (blocking SQLite reads)
    SearchTextOptions opt_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, FileState> files_; // known files (guarded by mu_)
    Backlog store_;   // SQLite's inserts of a read's chunks, one behind the read (read_from)
    Backlog backlog_; // last: its thread stops before what its tasks use goes
};

/// Announces a hosted seat's transcripts in its folder `dir` to `indexer`: `transcript.jsonl`
/// under `epoch`, and each reset archive `transcript.<epoch>.jsonl` as archived (at restore:
/// what the index lacks is read, a rebuilt index reads them all).
void announce_transcripts(
    SearchIndexer& indexer,
    const std::filesystem::path& dir,
    const std::string& seat,
    const std::string& epoch,
    const std::string& cwd);

} // namespace sluice::hub
