// SearchIndex: the full-text search store in the data dir — SQLite FTS5 with the trigram
// tokenizer, one row per indexed frame, the files' read offsets, the query and its snippets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace sluice::hub {

/// Hits one search answers by default.
inline constexpr std::size_t SEARCH_LIMIT_DEFAULT = 20;
/// Hits one search answers at most (a page of results, not an export).
inline constexpr std::size_t SEARCH_LIMIT_MAX = 200;
/// Bytes of a query at most. Basis: a pasted command or path; longer is a mistake, and the
/// trigram phrase it makes costs a posting list per three bytes.
inline constexpr std::size_t SEARCH_QUERY_MAX_BYTES = 1024;
/// Bytes of context a snippet keeps on each side of a match.
inline constexpr std::size_t SEARCH_SNIPPET_CONTEXT_BYTES = 80;
/// Matches a snippet marks at most (the rest of the frame is not shown).
inline constexpr std::size_t SEARCH_SNIPPET_MATCHES = 3;
/// Bytes the trigram tokenizer needs: a shorter query is answered by a LIKE scan.
inline constexpr std::size_t SEARCH_TRIGRAM_MIN_BYTES = 3;

/// One indexed frame: where it is (seat, epoch, seq, turn), when, and its indexed text.
struct SearchDoc {
    std::string seat{};     ///< seat id
    std::string epoch{};    ///< the seat's epoch the seq belongs to
    std::uint64_t seq{};    ///< the frame's position in that epoch
    std::uint64_t turn{};   ///< turns opened up to and with this frame (1-based; 0: none yet)
    std::int64_t time_ms{}; ///< the row's time (Unix ms), or when it was indexed
    std::string text{};     ///< indexed_text of the frame (search_text.hpp)
};

/// How far a file was indexed: read to `offset` (whole lines), `frames` frame rows and `turns`
/// turn openings before it, the file identified by device and inode (a replaced file differs).
struct SearchFile {
    std::string path{};     ///< the file
    std::string seat{};     ///< its seat
    std::string epoch{};    ///< the epoch its frames are numbered in
    std::uint64_t dev{};    ///< st_dev when last read
    std::uint64_t ino{};    ///< st_ino when last read
    std::uint64_t offset{}; ///< bytes read (through the last whole line)
    std::uint64_t frames{}; ///< frame rows before `offset` (the next frame's seq)
    std::uint64_t turns{};  ///< turns opened before `offset`
};

/// A search request.
struct SearchQuery {
    std::string q{};                         ///< the literal looked for (case ignored)
    std::optional<std::string> seat{};       ///< only this seat
    std::optional<std::string> project{};    ///< only seats of this project (working directory)
    std::optional<std::string> source{};     ///< only seats of this source ("sluice", "claude")
    std::int64_t since_ms{};                 ///< only frames at or after this time (Unix ms)
    std::size_t limit{SEARCH_LIMIT_DEFAULT}; ///< hits at most (clamped to SEARCH_LIMIT_MAX)
    std::int64_t cursor{};                   ///< a page's `next_cursor` (0: the newest first)
};

/// A piece of a snippet: text around a match, or a match (as the frame has it).
struct SnippetPiece {
    std::string text{}; ///< the bytes (cut at UTF-8 boundaries)
    bool match{};       ///< whether it is a match
};

/// One hit: the frame, its seat's facts, and a snippet with the matches marked.
struct SearchHit {
    std::string seat{};                  ///< seat id
    std::string epoch{};                 ///< epoch of `seq`
    std::uint64_t seq{};                 ///< the frame
    std::uint64_t turn{};                ///< its turn (1-based; 0: before the first)
    std::int64_t time_ms{};              ///< the row's time (Unix ms)
    bool archived{};                     ///< the epoch was replaced (a reset): history, not live
    std::string source{};                ///< the seat's source
    std::string project{};               ///< the seat's project ("" when unknown)
    std::vector<SnippetPiece> snippet{}; ///< text and marked matches
};

/// A page of hits, newest indexed first.
struct SearchPage {
    std::vector<SearchHit> hits{};             ///< at most the query's limit
    std::optional<std::int64_t> next_cursor{}; ///< set when more hits follow
    bool scanned{}; ///< answered by a scan of every doc (a short query, or one with % _ \)
};

/// The snippet of `text` around the first SEARCH_SNIPPET_MATCHES occurrences of `q` (ASCII case
/// ignored), with SEARCH_SNIPPET_CONTEXT_BYTES of context each side; the text's head, unmarked,
/// when `q` is not found in it. Pure.
[[nodiscard]] std::vector<SnippetPiece> make_snippet(std::string_view text, std::string_view q);

/// The search store: an SQLite database (WAL) holding an FTS5 table of indexed frames (trigram
/// tokenizer, detail=none: a substring of three bytes or more is looked up by its trigrams), each
/// frame's seat,
/// epoch, seq, turn and time, the seats' source and project, the archived epochs, and how far
/// each file was read. It is a cache: a file that cannot be opened as this index (missing, not
/// SQLite, damaged, another schema) is removed and made anew, empty, by `open`.
///
/// Memory: SQLite's page cache (up to `cache_size`, 16 MiB; given back down to
/// SEARCH_CACHE_KEPT whenever the indexer idles: release_memory) and one query's page; never
/// what was indexed.
///
/// @par Thread safety
/// Safe from any thread: one mutex over the connection (a query waits for a batch in progress).
class SearchIndex {
public:
    /// Opens (or creates) the index at `file`. A file that is not this index is replaced by an
    /// empty one; `recreated` says whether the index was missing or replaced (so everything is
    /// read again). @throw std::runtime_error when no index can be made
    /// there at all (the directory is not writable).
    static std::unique_ptr<SearchIndex> open(const std::filesystem::path& file, bool& recreated);

    ~SearchIndex();
    SearchIndex(const SearchIndex&) = delete;
    SearchIndex& operator=(const SearchIndex&) = delete;

    /// Adds a batch of docs and saves `file` (how far they were read) in one transaction, so an
    /// offset is never saved without its docs nor docs without their offset. @return false when
    /// the write failed (nothing of it is kept).
    bool add(const std::vector<SearchDoc>& docs, const SearchFile& file);

    /// How far `path` was indexed, or none when it never was.
    [[nodiscard]] std::optional<SearchFile> file(const std::string& path) const;

    /// Names seat `seat`'s source and project (kept until the seat is removed).
    void set_seat(const std::string& seat, const std::string& source, const std::string& project);

    /// Removes every doc of `seat` in `epoch` and the files read into it (a truncated or
    /// replaced file, read again).
    void remove_epoch(const std::string& seat, const std::string& epoch);

    /// Marks `seat`'s `epoch` archived: its docs stay and say so.
    void archive_epoch(const std::string& seat, const std::string& epoch);

    /// Removes everything of `seat`: docs, files, archived epochs, its source and project.
    void remove_seat(const std::string& seat);

    /// Answers `q`: frames whose indexed text holds `q.q` (ASCII case ignored: SQLite's LIKE),
    /// newest indexed first, filtered as it asks. The trigram index narrows the candidates; a
    /// query shorter than SEARCH_TRIGRAM_MIN_BYTES, or holding `%`, `_` or `\`, is answered by a
    /// scan of every doc (`scanned`), still exact.
    [[nodiscard]] SearchPage search(const SearchQuery& q) const;

    /// Docs held.
    [[nodiscard]] std::uint64_t docs() const;

    /// Frees what SQLite's page cache and buffers hold for this connection (it refills them as
    /// the next write or query reads) when its cache holds more than `above` bytes: called when
    /// indexing goes idle, so a burst's cache does not stay resident beside the windows, while a
    /// live seat's small appends keep the few pages they touch.
    void release_memory(std::size_t above);

private:
    explicit SearchIndex(sqlite3* db);
    void exec(const char* sql) const;

    mutable std::mutex mu_;
    sqlite3* db_;
};

} // namespace sluice::hub
