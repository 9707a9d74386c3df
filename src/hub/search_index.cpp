// SearchIndex: the SQLite FTS5 store of the search index (hub/search_index.hpp).
#include <sluice/core/utf8.hpp>
#include <sluice/hub/search_index.hpp>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <stdexcept>

namespace sluice::hub {

namespace {

// The schema's version (PRAGMA user_version): another value is another schema, made anew.
constexpr int SCHEMA_VERSION = 2;

constexpr const char* SCHEMA = R"sql(
CREATE TABLE IF NOT EXISTS docs(
    id INTEGER PRIMARY KEY, seat TEXT NOT NULL, epoch TEXT NOT NULL,
    seq INTEGER NOT NULL, turn INTEGER NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS docs_seat ON docs(seat, epoch);
-- detail=none: no positions kept (a quarter of the size, twice the insert rate: bench/RESULTS.md);
-- a LIKE '%q%' is still answered from the trigrams, and SQLite checks each candidate row itself.
CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5(text, tokenize = 'trigram', detail = none);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, seat TEXT NOT NULL, epoch TEXT NOT NULL, dev INTEGER NOT NULL,
    ino INTEGER NOT NULL, offset INTEGER NOT NULL, frames INTEGER NOT NULL,
    turns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS files_seat ON files(seat, epoch);
CREATE TABLE IF NOT EXISTS seats(
    seat TEXT PRIMARY KEY, source TEXT NOT NULL, project TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS archived(seat TEXT NOT NULL, epoch TEXT NOT NULL,
    PRIMARY KEY(seat, epoch));
PRAGMA user_version = 2;
)sql";

// A prepared statement, finalized when it goes.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) {
            throw std::runtime_error(std::string("search index: ") + sqlite3_errmsg(db));
        }
    }

    ~Stmt() { sqlite3_finalize(st_); }

    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    void bind(int i, std::string_view s) {
        sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    }

    void bind(int i, std::int64_t v) { sqlite3_bind_int64(st_, i, v); }

    void bind(int i, std::uint64_t v) { sqlite3_bind_int64(st_, i, static_cast<std::int64_t>(v)); }

    void bind_opt(int i, const std::optional<std::string>& s) {
        if (s) {
            bind(i, *s);
        } else {
            sqlite3_bind_null(st_, i);
        }
    }

    // SQLITE_ROW: a row; SQLITE_DONE: the end; anything else throws.
    bool step() {
        const int rc = sqlite3_step(st_);
        if (rc == SQLITE_ROW) {
            return true;
        }
        if (rc == SQLITE_DONE) {
            return false;
        }
        throw std::runtime_error(
            std::string("search index: ") + sqlite3_errmsg(sqlite3_db_handle(st_)));
    }

    // Steps to the end, then makes it ready to run again.
    void run() {
        while (step()) {
        }
        sqlite3_reset(st_);
    }

    [[nodiscard]] std::int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }

    [[nodiscard]] std::uint64_t u64(int col) const {
        return static_cast<std::uint64_t>(sqlite3_column_int64(st_, col));
    }

    [[nodiscard]] std::string text(int col) const {
        const auto* p = sqlite3_column_text(st_, col);
        const auto n = sqlite3_column_bytes(st_, col);
        return p == nullptr
                   ? std::string()
                   : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    }

private:
    sqlite3_stmt* st_{};
};

void remove_files(const std::filesystem::path& file) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::filesystem::remove(file.string() + "-wal", ec);
    std::filesystem::remove(file.string() + "-shm", ec);
    std::filesystem::remove(file.string() + "-journal", ec);
}

// Opens `file` as an index of this schema; null when it is not one (or cannot be opened).
sqlite3* try_open(const std::filesystem::path& file, std::string& why) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(
            file.c_str(),
            &db,
            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
            nullptr)
        != SQLITE_OK) {
        why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return nullptr;
    }
    sqlite3_busy_timeout(db, 5000);
    try {
        int version = -1;
        {
            Stmt v(db, "PRAGMA user_version");
            if (v.step()) {
                version = static_cast<int>(v.i64(0));
            }
        }
        int objects = 0;
        {
            Stmt n(db, "SELECT count(*) FROM sqlite_master");
            if (n.step()) {
                objects = static_cast<int>(n.i64(0));
            }
        }
        if (objects > 0 && version != SCHEMA_VERSION) {
            why = "another schema (version " + std::to_string(version) + ")";
            sqlite3_close(db);
            return nullptr;
        }
        if (objects > 0) {
            Stmt check(db, "PRAGMA quick_check");
            if (!check.step() || check.text(0) != "ok") {
                why = "damaged (quick_check)";
                sqlite3_close(db);
                return nullptr;
            }
        }
        char* err = nullptr;
        if (sqlite3_exec(
                db,
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = "
                "-16384;",
                nullptr,
                nullptr,
                &err)
                != SQLITE_OK
            || sqlite3_exec(db, SCHEMA, nullptr, nullptr, &err) != SQLITE_OK) {
            why = err != nullptr ? err : "cannot make the schema";
            sqlite3_free(err);
            sqlite3_close(db);
            return nullptr;
        }
    } catch (const std::exception& e) {
        why = e.what();
        sqlite3_close(db);
        return nullptr;
    }
    return db;
}

bool ascii_ieq(char a, char b) {
    const auto lower = [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    return lower(a) == lower(b);
}

std::size_t ifind(std::string_view text, std::string_view q, std::size_t from) {
    if (q.empty() || q.size() > text.size()) {
        return std::string_view::npos;
    }
    const auto* it = std::search(
        text.begin() + static_cast<std::ptrdiff_t>(std::min(from, text.size())),
        text.end(),
        q.begin(),
        q.end(),
        ascii_ieq);
    return it == text.end() ? std::string_view::npos : static_cast<std::size_t>(it - text.begin());
}

// `q` as a LIKE pattern matching it anywhere (escape: backslash).
std::string like_pattern(std::string_view q) {
    std::string out = "%";
    for (char c : q) {
        if (c == '%' || c == '_' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    out += '%';
    return out;
}

} // namespace

std::vector<SnippetPiece> make_snippet(std::string_view text, std::string_view q) {
    std::vector<SnippetPiece> out;
    const auto add = [&out](std::string_view s, bool match) {
        if (!s.empty()) {
            out.push_back(SnippetPiece{std::string(s), match});
        }
    };
    auto at = ifind(text, q, 0);
    if (at == std::string_view::npos) {
        const auto end = utf8::floor_boundary(text, 2 * SEARCH_SNIPPET_CONTEXT_BYTES);
        add(text.substr(0, end), false);
        if (end < text.size()) {
            add("…", false);
        }
        return out;
    }
    std::size_t from = utf8::ceil_boundary(
        text, at > SEARCH_SNIPPET_CONTEXT_BYTES ? at - SEARCH_SNIPPET_CONTEXT_BYTES : 0);
    if (from > 0) {
        add("…", false);
    }
    for (std::size_t n = 0; at != std::string_view::npos && n < SEARCH_SNIPPET_MATCHES; ++n) {
        add(text.substr(from, at - from), false);
        add(text.substr(at, q.size()), true);
        from = at + q.size();
        const auto next = ifind(text, q, from);
        if (next == std::string_view::npos || next - from > 2 * SEARCH_SNIPPET_CONTEXT_BYTES
            || n + 1 == SEARCH_SNIPPET_MATCHES) {
            break;
        }
        at = next;
    }
    const auto end =
        utf8::floor_boundary(text, std::min(text.size(), from + SEARCH_SNIPPET_CONTEXT_BYTES));
    add(text.substr(from, end - from), false);
    if (end < text.size()) {
        add("…", false);
    }
    return out;
}

SearchIndex::SearchIndex(sqlite3* db)
    : db_(db) {
}

SearchIndex::~SearchIndex() {
    sqlite3_close(db_);
}

std::unique_ptr<SearchIndex> SearchIndex::open(const std::filesystem::path& file, bool& recreated) {
    std::error_code ec;
    recreated = !std::filesystem::exists(file, ec); // lost (or never made): everything is read
    std::string why;
    sqlite3* db = try_open(file, why);
    if (db == nullptr) {
        spdlog::warn(
            "search: the index {} cannot be used ({}): made anew, rebuilt in the background",
            file.string(),
            why);
        remove_files(file);
        recreated = true;
        db = try_open(file, why);
        if (db == nullptr) {
            throw std::runtime_error("cannot make the search index " + file.string() + ": " + why);
        }
    }
    return std::unique_ptr<SearchIndex>(new SearchIndex(db));
}

void SearchIndex::exec(const char* sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string what = err != nullptr ? err : "error";
        sqlite3_free(err);
        throw std::runtime_error("search index: " + what);
    }
}

bool SearchIndex::add(const std::vector<SearchDoc>& docs, const SearchFile& file) {
    std::lock_guard lock(mu_);
    try {
        exec("BEGIN");
        {
            Stmt doc(
                db_, "INSERT INTO docs(seat, epoch, seq, turn, time) VALUES(?1, ?2, ?3, ?4, ?5)");
            Stmt body(db_, "INSERT INTO body(rowid, text) VALUES(?1, ?2)");
            for (const auto& d : docs) {
                doc.bind(1, d.seat);
                doc.bind(2, d.epoch);
                doc.bind(3, d.seq);
                doc.bind(4, d.turn);
                doc.bind(5, d.time_ms);
                doc.run();
                body.bind(1, static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_)));
                body.bind(2, d.text);
                body.run();
            }
        }
        Stmt f(
            db_,
            "INSERT OR REPLACE INTO files(path, seat, epoch, dev, ino, offset, frames, turns) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        f.bind(1, file.path);
        f.bind(2, file.seat);
        f.bind(3, file.epoch);
        f.bind(4, file.dev);
        f.bind(5, file.ino);
        f.bind(6, file.offset);
        f.bind(7, file.frames);
        f.bind(8, file.turns);
        f.run();
        exec("COMMIT");
        return true;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        char* err = nullptr;
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, &err);
        sqlite3_free(err);
        return false;
    }
}

std::optional<SearchFile> SearchIndex::file(const std::string& path) const {
    std::lock_guard lock(mu_);
    Stmt st(db_, "SELECT seat, epoch, dev, ino, offset, frames, turns FROM files WHERE path = ?1");
    st.bind(1, path);
    if (!st.step()) {
        return std::nullopt;
    }
    SearchFile f;
    f.path = path;
    f.seat = st.text(0);
    f.epoch = st.text(1);
    f.dev = st.u64(2);
    f.ino = st.u64(3);
    f.offset = st.u64(4);
    f.frames = st.u64(5);
    f.turns = st.u64(6);
    return f;
}

void SearchIndex::set_seat(
    const std::string& seat, const std::string& source, const std::string& project) {
    std::lock_guard lock(mu_);
    Stmt st(db_, "INSERT OR REPLACE INTO seats(seat, source, project) VALUES(?1, ?2, ?3)");
    st.bind(1, seat);
    st.bind(2, source);
    st.bind(3, project);
    st.run();
}

void SearchIndex::remove_epoch(const std::string& seat, const std::string& epoch) {
    std::lock_guard lock(mu_);
    exec("BEGIN");
    try {
        for (const char* sql :
             {"DELETE FROM body WHERE rowid IN (SELECT id FROM docs WHERE seat = ?1 AND epoch = "
              "?2)",
              "DELETE FROM docs WHERE seat = ?1 AND epoch = ?2",
              "DELETE FROM files WHERE seat = ?1 AND epoch = ?2"}) {
            Stmt st(db_, sql);
            st.bind(1, seat);
            st.bind(2, epoch);
            st.run();
        }
        exec("COMMIT");
    } catch (...) {
        exec("ROLLBACK");
        throw;
    }
}

void SearchIndex::archive_epoch(const std::string& seat, const std::string& epoch) {
    std::lock_guard lock(mu_);
    Stmt st(db_, "INSERT OR IGNORE INTO archived(seat, epoch) VALUES(?1, ?2)");
    st.bind(1, seat);
    st.bind(2, epoch);
    st.run();
}

void SearchIndex::remove_seat(const std::string& seat) {
    std::lock_guard lock(mu_);
    exec("BEGIN");
    try {
        for (const char* sql :
             {"DELETE FROM body WHERE rowid IN (SELECT id FROM docs WHERE seat = ?1)",
              "DELETE FROM docs WHERE seat = ?1",
              "DELETE FROM files WHERE seat = ?1",
              "DELETE FROM seats WHERE seat = ?1",
              "DELETE FROM archived WHERE seat = ?1"}) {
            Stmt st(db_, sql);
            st.bind(1, seat);
            st.run();
        }
        exec("COMMIT");
    } catch (...) {
        exec("ROLLBACK");
        throw;
    }
}

SearchPage SearchIndex::search(const SearchQuery& q) const {
    SearchPage page;
    if (q.q.empty()) {
        return page;
    }
    // LIKE '%q%' is answered from the trigrams (FTS5 reads the pattern's trigrams, SQLite checks
    // each candidate); a pattern with an ESCAPE clause, or shorter than a trigram, is a scan.
    const bool wild = q.q.find_first_of("%_\\") != std::string::npos;
    page.scanned = wild || q.q.size() < SEARCH_TRIGRAM_MIN_BYTES;
    const auto limit = std::clamp<std::size_t>(q.limit, 1, SEARCH_LIMIT_MAX);
    std::string sql =
        "SELECT d.id, d.seat, d.epoch, d.seq, d.turn, d.time, b.text, coalesce(s.source, ''), "
        "coalesce(s.project, ''), EXISTS(SELECT 1 FROM archived a WHERE a.seat = d.seat AND "
        "a.epoch = d.epoch) FROM body b JOIN docs d ON d.id = b.rowid LEFT JOIN seats s ON "
        "s.seat = d.seat WHERE ";
    sql += wild ? "b.text LIKE ?1 ESCAPE '\\'" : "b.text LIKE ?1";
    sql += " AND (?2 = 0 OR b.rowid < ?2) AND (?3 IS NULL OR d.seat = ?3) AND (?4 IS NULL OR "
           "s.project = ?4) AND (?5 IS NULL OR s.source = ?5) AND d.time >= ?6 ORDER BY b.rowid "
           "DESC LIMIT ?7";
    std::lock_guard lock(mu_);
    Stmt st(db_, sql.c_str());
    st.bind(1, wild ? like_pattern(q.q) : "%" + q.q + "%");
    st.bind(2, q.cursor);
    st.bind_opt(3, q.seat);
    st.bind_opt(4, q.project);
    st.bind_opt(5, q.source);
    st.bind(6, q.since_ms);
    st.bind(7, static_cast<std::int64_t>(limit + 1));
    std::int64_t last_id = 0;
    while (st.step()) {
        if (page.hits.size() == limit) {
            page.next_cursor = last_id; // the next page: older than the last hit shown
            break;
        }
        SearchHit h;
        last_id = st.i64(0);
        h.seat = st.text(1);
        h.epoch = st.text(2);
        h.seq = st.u64(3);
        h.turn = st.u64(4);
        h.time_ms = st.i64(5);
        h.snippet = make_snippet(st.text(6), q.q);
        h.source = st.text(7);
        h.project = st.text(8);
        h.archived = st.i64(9) != 0;
        page.hits.push_back(std::move(h));
    }
    return page;
}

void SearchIndex::release_memory(std::size_t above) {
    std::lock_guard lock(mu_);
    int used = 0;
    int highwater = 0;
    if (sqlite3_db_status(db_, SQLITE_DBSTATUS_CACHE_USED, &used, &highwater, 0) == SQLITE_OK
        && static_cast<std::size_t>(used) <= above) {
        return;
    }
    (void)sqlite3_db_release_memory(db_);
}

std::uint64_t SearchIndex::docs() const {
    std::lock_guard lock(mu_);
    Stmt st(db_, "SELECT count(*) FROM docs");
    return st.step() ? st.u64(0) : 0;
}

} // namespace sluice::hub
