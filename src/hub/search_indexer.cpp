// SearchIndexer: the search index fed in the background (hub/search_indexer.hpp).
#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/hub/search_indexer.hpp>

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <future>
#include <memory>
#include <utility>
#include <vector>

namespace sluice::hub {

namespace json = boost::json;

namespace {

// The indexer's thread yields to seats' work: it runs at this nice value (Linux: per thread).
constexpr int INDEXER_NICE = 10;

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// One chunk's docs stored on `store`'s thread while the reader reads the next chunk
// (bench/RESULTS.md, "Search index"): at most one chunk waits to be stored.
class StoreBehind {
public:
    StoreBehind(Backlog& store, SearchIndex& index)
        : store_(store)
        , index_(index) {}

    // Waits for the chunk handed over last; whether it was stored (false: the index refused it,
    // or the store stopped before it ran).
    bool settle() {
        if (!stored_.valid()) {
            return true;
        }
        try {
            return stored_.get();
        } catch (const std::future_error&) {
            return false;
        }
    }

    // Hands `docs` and the file's state after them to the store thread (settle first); false
    // when it is stopping.
    bool store(std::vector<SearchDoc> docs, const SearchFile& at) {
        auto done = std::make_shared<std::promise<bool>>();
        stored_ = done->get_future();
        return store_.add(
                   [&index = index_, done, docs = std::move(docs), at] {
                       done->set_value(index.add(docs, at));
                   },
                   false)
               == Backlog::Added::queued;
    }

private:
    Backlog& store_;
    SearchIndex& index_;
    std::future<bool> stored_;
};

// A descriptor closed when it goes.
struct Fd {
    int fd;

    explicit Fd(int f)
        : fd(f) {}

    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

} // namespace

SearchIndexer::SearchIndexer(const std::filesystem::path& db_file, SearchTextOptions opt)
    : index_(SearchIndex::open(db_file, rebuilt_))
    , opt_(opt)
    , store_("search-store", 1, INDEXER_NICE)
    , backlog_("search", SEARCH_QUEUE_MAX, INDEXER_NICE) {
}

SearchIndexer::~SearchIndexer() {
    stop();
}

void SearchIndexer::changed(const std::filesystem::path& file, SearchTarget target) {
    auto key = file.string();
    {
        std::lock_guard lock(mu_);
        auto& st = files_[key];
        st.target = std::move(target);
        st.done = false;
        if (st.queued) {
            return; // its task reads the file as it is when it runs
        }
        st.queued = true;
    }
    const auto added = backlog_.add([this, key] { index_queued(key); });
    if (added != Backlog::Added::queued) {
        std::lock_guard lock(mu_);
        if (auto it = files_.find(key); it != files_.end()) {
            it->second.queued = false;
        }
        if (added == Backlog::Added::full) {
            spdlog::warn("search: {} waits for its next change: the index queue is full", key);
        }
    }
}

void SearchIndexer::remove_seat(std::string seat) {
    {
        std::lock_guard lock(mu_);
        std::erase_if(files_, [&seat](const auto& kv) {
            return kv.second.target.seat == seat && !kv.second.queued;
        });
    }
    // Never dropped for a full queue: one per removal, in order after what was queued.
    (void)backlog_.add([this, seat = std::move(seat)] { index_->remove_seat(seat); }, false);
}

void SearchIndexer::search(SearchQuery q, const boost::asio::any_io_executor& ex, SearchDone done) {
    auto page = std::make_shared<std::optional<SearchPage>>();
    auto shared_done = std::make_shared<SearchDone>(std::move(done));
    const bool queued = queries_.submit(
        [this, page, q = std::move(q)] {
            try {
                *page = index_->search(q);
            } catch (const std::exception& e) {
                spdlog::error("search: a query failed: {}", e.what());
                *page = SearchPage{};
            }
            return boost::system::error_code{};
        },
        ex,
        [page, shared_done](boost::system::error_code) { (*shared_done)(std::move(*page)); });
    if (!queued) {
        boost::asio::post(ex, [shared_done] { (*shared_done)(std::nullopt); });
    }
}

SearchProgress SearchIndexer::progress() const {
    std::lock_guard lock(mu_);
    SearchProgress p;
    p.total = files_.size();
    for (const auto& [path, st] : files_) {
        p.done += st.done ? 1 : 0;
        p.queued += st.queued ? 1 : 0;
    }
    p.rebuilt = rebuilt_;
    return p;
}

void SearchIndexer::wait_idle() {
    backlog_.wait_idle();
}

void SearchIndexer::stop() {
    backlog_.stop(); // first: a read waiting on store_ gets its answer (or a broken promise)
    store_.stop();
}

void SearchIndexer::index_queued(const std::string& file) {
    SearchTarget target;
    {
        std::lock_guard lock(mu_);
        auto& st = files_[file];
        st.queued = false; // a change from now on queues it again
        target = st.target;
    }
    try {
        const bool done = index_file(file, target);
        std::lock_guard lock(mu_);
        if (auto it = files_.find(file); it != files_.end() && !it->second.queued) {
            it->second.done = done;
        }
    } catch (const std::exception& e) {
        spdlog::error("search: indexing {}: {}", file, e.what());
    }
    if (backlog_.waiting() == 0) {
        // Idle for now: SQLite's cache goes (after the store's last chunk) once it holds more
        // than a live seat's appends touch, so what a burst read does not stay resident beside
        // the windows; the next file's read refills it.
        (void)store_.add(
            [index = index_.get()] { index->release_memory(SEARCH_CACHE_KEPT); }, false);
    }
}

bool SearchIndexer::index_file(const std::string& file, const SearchTarget& target) {
    auto t = target;
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));

    struct stat st {};

    if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
        return true; // gone (a removed seat's folder, a deleted session): nothing to read
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const auto dev = static_cast<std::uint64_t>(st.st_dev);
    const auto ino = static_cast<std::uint64_t>(st.st_ino);
    auto stored = index_->file(file);
    if (t.archived && !stored) {
        // An archive the index has no offset for (a rebuild): read whole, replacing what the
        // live file left of that epoch.
        index_->remove_epoch(t.seat, t.epoch);
    }
    if (stored && t.hosted && !t.archived && stored->epoch != t.epoch) {
        // A reset: the old epoch's file is kept as transcript.<old>.jsonl; its rest is read
        // from where it was left, under its name, and its epoch is archived.
        const auto old_path =
            (std::filesystem::path(file).parent_path() / ("transcript." + stored->epoch + ".jsonl"))
                .string();
        Fd old(::open(old_path.c_str(), O_RDONLY | O_CLOEXEC));

        struct stat ost {};

        if (old.fd >= 0 && ::fstat(old.fd, &ost) == 0
            && static_cast<std::uint64_t>(ost.st_ino) == stored->ino) {
            auto f = *stored;
            f.path = old_path;
            auto ot = t;
            ot.epoch = stored->epoch;
            ot.archived = true;
            read_from(old.fd, static_cast<std::uint64_t>(ost.st_size), f, ot);
        }
        index_->archive_epoch(t.seat, stored->epoch);
        stored.reset();
    } else if (stored && (stored->ino != ino || stored->dev != dev || size < stored->offset)) {
        spdlog::info("search: {} was truncated or replaced: indexed again", file);
        if (t.hosted) {
            index_->archive_epoch(t.seat, stored->epoch);
        } else {
            index_->remove_epoch(stored->seat, stored->epoch);
        }
        stored.reset();
    }
    SearchFile f;
    if (stored) {
        f = *stored;
    } else {
        f.path = file;
        f.seat = t.seat;
        f.epoch = t.epoch;
    }
    f.dev = dev;
    f.ino = ino;
    if (t.archived) {
        index_->archive_epoch(t.seat, t.epoch);
    }
    if (!t.project.empty() || !stored) {
        index_->set_seat(t.seat, t.source, t.project);
    }
    return read_from(fd.fd, size, f, t);
}

bool SearchIndexer::read_from(int fd, std::uint64_t size, SearchFile& f, SearchTarget& t) {
    TurnScan scan; // its state at the offset is not kept: a turn opened across a restart may be
                   // counted as the scan from a fresh state counts it
    RowScanner scanner;
    std::string type;
    TurnFacts facts;
    std::string buf;
    std::vector<SearchDoc> docs;
    StoreBehind behind(store_, *index_); // parsing and SQLite's inserts overlap
    std::uint64_t pos = f.offset;
    bool skipping = false; // inside a line longer than SEARCH_LINE_MAX_BYTES
    std::array<unsigned char, 16 * 1024> first_block{}; // most rows parse without a malloc
    const auto index = [&](const json::object& row) {
        auto text_of = indexed_text(row, opt_);
        if (!text_of.empty()) {
            const auto time = row_time_ms(row);
            docs.push_back(SearchDoc{
                f.seat,
                f.epoch,
                f.frames,
                f.turns,
                time != 0 ? time : now_ms(),
                std::move(text_of)});
        }
    };
    const auto find_project = [&](const json::object& row) {
        if (const auto* cwd = row.if_contains("cwd"); cwd != nullptr && cwd->is_string()) {
            t.project = std::string(cwd->get_string());
            index_->set_seat(t.seat, t.source, t.project);
        }
    };
    // `padded`: ROW_SCAN_PADDING readable bytes follow the line (the scanner's precondition).
    const auto line = [&](std::string_view text, bool padded) {
        const auto kind = padded ? scanner.scan(text, type, facts) : RowKind::unsure;
        if (kind == RowKind::not_frame) {
            return;
        }
        if (kind == RowKind::frame) {
            // Turn facts from the scanner; the row built only when it may hold indexed text
            // (or the project is still unknown), never serialized again.
            if (scan.opens_turn(type, facts)) {
                ++f.turns;
            }
            if (type == "user" || type == "assistant" || t.project.empty()) {
                // One per row (Boost 1.81's monotonic_resource::release then throws bad_alloc).
                json::monotonic_resource arena(first_block.data(), first_block.size());
                boost::system::error_code ec;
                auto v = json::parse(text, ec, json::storage_ptr(&arena));
                if (!ec && v.is_object()) {
                    if (t.project.empty()) {
                        find_project(v.get_object());
                    }
                    index(v.get_object());
                }
            }
            ++f.frames;
            return;
        }
        boost::system::error_code ec;
        auto v = json::parse(text, ec);
        if (ec || !v.is_object()) {
            return; // not a row (damage): takes no position
        }
        auto& row = v.get_object();
        const auto* type_at = row.if_contains("type");
        if (type_at == nullptr || !type_at->is_string() || !is_frame_type(type_at->get_string())) {
            return;
        }
        if (t.project.empty()) {
            find_project(row);
        }
        auto frame = Frame::from_row(std::move(row));
        if (scan.opens_turn(*frame)) {
            ++f.turns;
        }
        index(frame->row());
        ++f.frames;
    };
    while (pos < size) {
        if (backlog_.stopping()) {
            (void)behind.settle();
            return false;
        }
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(SEARCH_CHUNK_BYTES, size - pos));
        const auto old = buf.size();
        buf.resize(old + n);
        if (!pread_all(fd, buf.data() + old, n, pos)) {
            spdlog::warn("search: cannot read {}", f.path);
            (void)behind.settle();
            return false;
        }
        pos += n;
        std::size_t start = 0;
        for (auto nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', start)) {
            if (skipping) {
                ++f.frames; // the long row's position (a frame, as long rows are)
            } else {
                line(
                    std::string_view(buf.data() + start, nl - start),
                    nl + ROW_SCAN_PADDING <= buf.size());
            }
            skipping = false;
            start = nl + 1;
        }
        buf.erase(0, start);
        if (buf.size() > SEARCH_LINE_MAX_BYTES) {
            skipping = true;
            buf.clear();
        }
        if (!skipping) {
            f.offset = pos - buf.size();
        }
        if (!behind.settle() || !behind.store(std::exchange(docs, {}), f)) {
            return false;
        }
    }
    // All there is is read (a last line still without its newline waits for it).
    return behind.settle();
}

void announce_transcripts(
    SearchIndexer& indexer,
    const std::filesystem::path& dir,
    const std::string& seat,
    const std::string& epoch,
    const std::string& cwd) {
    constexpr std::string_view HEAD = "transcript.";
    constexpr std::string_view TAIL = ".jsonl";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const auto name = e.path().filename().string();
        if (name.size() <= HEAD.size() + TAIL.size() || !name.starts_with(HEAD)
            || !name.ends_with(TAIL) || name == "transcript.jsonl") {
            continue;
        }
        const auto old = name.substr(HEAD.size(), name.size() - HEAD.size() - TAIL.size());
        indexer.changed(e.path(), SearchTarget{seat, old, "sluice", cwd, true, true});
    }
    indexer.changed(
        dir / "transcript.jsonl", SearchTarget{seat, epoch, "sluice", cwd, true, false});
}

} // namespace sluice::hub
