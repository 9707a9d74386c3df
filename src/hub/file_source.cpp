// FileSource: a foreign session file followed for its seat (hub/file_source.hpp).
#include "ids.hpp"
#include "journal_store.hpp"

#include <sluice/core/assert.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/codex_sessions.hpp>
#include <sluice/hub/file_source.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sluice::hub {

namespace json = boost::json;

namespace {

// Bytes hashed at the head, and before the recorded end, of a foreign file for its key.
constexpr std::uint64_t KEY_HASH_BYTES = 4096;

constexpr std::string_view KEY_FILE = "key.json";

// Bytes a background count reads in one writer job. Basis: the count runs at ~1 GB/s of CPU
// (bench/RESULTS.md, "A never-seen 2.5 GiB session"), so another seat's append waits behind
// it for ~60 ms at most, while a 2.5 GiB file takes 40 jobs.
constexpr std::uint64_t COUNT_STEP_BYTES = 64ULL << 20;
constexpr std::string_view INDEX_FILE = "index.sidx";

// FNV-1a 64 of `n` bytes at `offset`; nullopt when they cannot be read whole.
std::optional<std::uint64_t> hash_at(int fd, std::uint64_t offset, std::uint64_t n) {
    std::string buf(static_cast<std::size_t>(n), '\0');
    if (!pread_all(fd, buf.data(), n, offset)) {
        return std::nullopt;
    }
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : buf) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

// What the data dir remembers of a foreign file: which file (device, inode), how far it was
// indexed (size, mtime) and what its bytes were (a hash of its head and of the bytes before
// that size), and the epoch its frames were numbered under.
struct Key {
    std::uint64_t dev{}, ino{}, size{};
    std::int64_t mtime_ns{};
    std::uint64_t head{}, tail{};
    std::string epoch;
};

std::int64_t mtime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000
           + static_cast<std::int64_t>(st.st_mtim.tv_nsec);
}

std::optional<Key> read_key(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) {
        return std::nullopt;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto v = json::parse(ss.str(), ec);
    if (ec || !v.is_object()) {
        return std::nullopt;
    }
    const auto& o = v.get_object();
    Key k;
    try {
        k.dev = json::value_to<std::uint64_t>(o.at("dev"));
        k.ino = json::value_to<std::uint64_t>(o.at("ino"));
        k.size = json::value_to<std::uint64_t>(o.at("size"));
        k.mtime_ns = json::value_to<std::int64_t>(o.at("mtime_ns"));
        k.head = std::stoull(json::value_to<std::string>(o.at("head")), nullptr, 16);
        k.tail = std::stoull(json::value_to<std::string>(o.at("tail")), nullptr, 16);
        k.epoch = json::value_to<std::string>(o.at("epoch"));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return k;
}

std::string hex(std::uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
}

// The key of `fd` as indexed up to `size` (whole lines).
std::optional<Key> key_of(int fd, std::uint64_t size, std::string epoch) {
    struct stat st {};

    if (::fstat(fd, &st) != 0) {
        return std::nullopt;
    }
    const auto n = std::min(size, KEY_HASH_BYTES);
    auto head = hash_at(fd, 0, n);
    auto tail = hash_at(fd, size - n, n);
    if (!head || !tail) {
        return std::nullopt;
    }
    return Key{
        static_cast<std::uint64_t>(st.st_dev),
        static_cast<std::uint64_t>(st.st_ino),
        size,
        mtime_ns(st),
        *head,
        *tail,
        std::move(epoch)};
}

// Whether the index kept for `old` still describes the file open on `fd`: the same file, not
// shorter, its head and the bytes before the old end unchanged (same size: same mtime too).
bool key_holds(int fd, const Key& old) {
    struct stat st {};

    if (::fstat(fd, &st) != 0) {
        return false;
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (static_cast<std::uint64_t>(st.st_dev) != old.dev
        || static_cast<std::uint64_t>(st.st_ino) != old.ino || size < old.size
        || (size == old.size && mtime_ns(st) != old.mtime_ns)) {
        return false;
    }
    const auto n = std::min(old.size, KEY_HASH_BYTES);
    return hash_at(fd, 0, n) == old.head && hash_at(fd, old.size - n, n) == old.tail;
}

Result<void> write_key(const std::filesystem::path& file, const Key& k) {
    json::object o{
        {"dev", k.dev},
        {"ino", k.ino},
        {"size", k.size},
        {"mtime_ns", k.mtime_ns},
        {"head", hex(k.head)},
        {"tail", hex(k.tail)},
        {"epoch", k.epoch}};
    auto text = json::serialize(o);
    text += '\n';
    if (auto r = safe_write(file, text); !r) {
        return Failure{r.error(), "cannot write " + file.string() + ": " + r.error().message()};
    }
    return {};
}

// What a foreign seat's summary shows of its listing, open or not.
void foreign_fields(SeatSummary& s, const ForeignListing& l, const std::string& failed) {
    s.source = foreign_source(l);
    s.project = l.project;
    s.title = l.title;
    s.session_id = l.session_id;
    s.state = SeatState::idle;
    s.degraded = false;
    s.reason = failed;
    s.turns = l.turns.value_or(0);
    s.turns_known = l.turns.has_value();
}

std::uint64_t inode_of(const std::filesystem::path& p) {
    struct stat st {};

    return ::stat(p.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

// Writes the key of `file` as indexed up to `size` under `epoch` (a warning when it cannot).
void keep_key(
    const std::filesystem::path& file,
    const std::filesystem::path& dir,
    std::uint64_t size,
    const std::string& epoch) {
    const int kfd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (kfd < 0) {
        return;
    }
    if (auto k = key_of(kfd, size, epoch)) {
        if (auto r = write_key(dir / KEY_FILE, *k); !r) {
            spdlog::warn("{}", r.error().message);
        }
    }
    ::close(kfd);
}

} // namespace

struct FileSource::Opened {
    std::optional<Transcript> transcript;
    bool counted{true};     // else numbered from the end: counted in the background
    std::uint64_t origin{}; // when counted: the first frame's seq
    Window window;
    std::string epoch;
    std::uint64_t ino{};
    std::string error;
};

FileSource::FileSource(std::filesystem::path file, ForeignListing listing)
    : file_(std::move(file))
    , listing_(std::move(listing)) {
}

void FileSource::bind(SourceHost& host, std::weak_ptr<SourceHost> weak) {
    host_ = &host;
    weak_ = std::move(weak);
    host_->feed().unready(); // its viewers wait for the file to open
}

SeatSummary FileSource::listed_summary(
    const SeatSpec& spec,
    const ForeignListing& listing,
    std::chrono::system_clock::time_point last_activity) {
    // The summary of a seat with nothing open: its spec, no window, no viewers.
    SeatSummary s;
    s.id = spec.id;
    s.name = spec.name;
    s.agent = spec.agent;
    s.epoch = spec.epoch;
    s.model = spec.model;
    s.permission_mode = spec.permission_mode;
    s.last_activity = last_activity;
    foreign_fields(s, listing, {});
    return s;
}

bool FileSource::wait_open(std::function<void()> then) {
    if (opened_) {
        return false;
    }
    if (then) {
        after_open_.push_back(std::move(then));
    }
    open();
    return true;
}

void FileSource::summarize(SeatSummary& s) const {
    foreign_fields(s, listing_, failed_);
    s.origin = origin_;
}

Failure FileSource::refusal() const {
    return Failure::of(
        errc::conflict,
        std::string(
            listing_.format == RowFormat::codex_rollout ? CODEX_READ_ONLY : FOREIGN_READ_ONLY));
}

void FileSource::close() {
    if (count_stop_) {
        *count_stop_ = true; // nothing more is read for a closed seat
    }
}

// These four call each other directly only when the writer refuses a job (then the next one
// runs on a later change) or a change came during an open: one level deep at most.
// NOLINTNEXTLINE(misc-no-recursion)
void FileSource::open(bool reindex) {
    if (opening_) {
        return;
    }
    opening_ = true;
    if (count_stop_) {
        *count_stop_ = true; // a count of the file as opened before must not keep its index
    }
    auto out = std::make_shared<Opened>();
    const auto& opt = host_->options();
    const bool queued = host_->journal().submit(
        [file = file_,
         dir = opt.dir,
         budget = opt.budget,
         format = listing_.format,
         reindex,
         out]() {
            std::error_code fec;
            std::filesystem::create_directories(dir, fec);
            const auto index = dir / INDEX_FILE;
            TranscriptOptions o;
            o.read_only = true;
            o.follow = true;
            o.index_file = index;
            o.write_index = !fec;
            // Opening costs the window: a file without an index is numbered from its end and
            // counted afterwards, in steps (count).
            o.end_relative = true;
            o.format = format; // a Codex rollout: each line read as at most one frame
            // Which file the kept index describes: a rewritten, truncated or replaced file is
            // counted afresh (its index removed) under a new epoch.
            const auto old = read_key(dir / KEY_FILE);
            const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
            const bool holds = fd >= 0 && old && !reindex && key_holds(fd, *old);
            if (fd >= 0) {
                ::close(fd);
            }
            if (!holds) {
                std::filesystem::remove(index, fec);
            }
            auto t = Transcript::open(file, o);
            if (!t) {
                out->error = "cannot open " + file.string() + ": " + t.error().message();
                return boost::system::error_code{};
            }
            // The kept epoch names the kept numbering: without its index, a file numbered from
            // its end could number its frames otherwise, so it starts a new epoch.
            out->epoch = holds && t->index_was_valid() ? old->epoch : new_id("e");
            auto w = t->load_window(budget);
            if (!w) {
                out->error = "cannot read " + file.string() + ": " + w.error().message();
                return boost::system::error_code{};
            }
            out->ino = inode_of(file);
            out->counted = t->counted();
            out->origin = out->counted ? t->origin() : 0;
            if (o.write_index && out->counted) {
                keep_key(file, dir, t->size_bytes(), out->epoch);
            }
            out->window = std::move(*w);
            out->transcript.emplace(std::move(*t));
            return boost::system::error_code{};
        },
        [this, weak = weak_, out](boost::system::error_code) {
            if (auto host = weak.lock()) {
                opened(out);
            }
        });
    if (!queued) {
        out->error = "the disk queue is full; try again";
        opened(out);
    }
}

// NOLINTNEXTLINE(misc-no-recursion): one level deep at most, see open.
void FileSource::opened(const std::shared_ptr<Opened>& r) {
    opening_ = false;
    const bool was_open = opened_;
    opened_ = true;
    auto& feed = host_->feed();
    auto& spec = host_->spec();
    if (!r->transcript) {
        failed_ = r->error;
        spdlog::warn("seat {}: {}", spec.id, failed_);
        if (!feed.ready()) {
            // Never opened: its viewers are served what there is (nothing); the list says why.
            feed.replace(spec.epoch, Window(host_->options().budget), /*restart=*/false);
        }
    } else {
        failed_.clear();
        ino_ = r->ino;
        host_->journal().adopt(std::move(*r->transcript)); // read-only: someone else's file
        origin_ = r->counted ? std::optional(r->origin) : std::nullopt;
        spec.epoch = r->epoch;
        const auto openings = r->window.openings().size();
        if (r->window.first() == 0) {
            spec.turns = openings;
            listing_.turns = openings;
        }
        // Waiting viewers start now; reopened (truncated or replaced), every viewer starts again
        // from the new window.
        feed.replace(spec.epoch, std::move(r->window), /*restart=*/was_open);
        if (!r->counted) {
            count();
        }
    }
    host_->journal().forget_frame_text();
    auto pending = std::move(after_open_);
    after_open_.clear();
    for (auto& fn : pending) {
        fn();
    }
    host_->changed();
    if (std::exchange(again_, false)) {
        changed();
    }
}

// NOLINTNEXTLINE(misc-no-recursion): one level deep at most, see open.
void FileSource::changed() {
    if (host_->closed()) {
        return;
    }
    if (opening_) {
        again_ = true; // looked at once it is open
        return;
    }
    if (opened_ && !failed_.empty()) {
        open(); // it could not be opened (a hooked session's file not written yet): again
        return;
    }
    if (!opened_ || !host_->journal().store()) {
        // Not open: only what a listing shows changes.
        if (relist_if_changed(file_, listing_)) {
            host_->touched(std::chrono::system_clock::now());
            host_->changed();
        }
        return;
    }
    if (reading_) {
        again_ = true;
        return;
    }
    read(inode_of(file_) != ino_);
}

// NOLINTNEXTLINE(misc-no-recursion): one level deep at most, see open.
void FileSource::read(bool replaced) {
    if (replaced) {
        spdlog::info("seat {}: {} was replaced: read again", host_->spec().id, file_.string());
        open(/*reindex=*/true);
        return;
    }
    reading_ = true;
    auto out = std::make_shared<Result<std::vector<FramePtr>>>(std::vector<FramePtr>{});
    auto store = host_->journal().store();
    const bool queued = host_->journal().submit(
        [store, out]() {
            std::lock_guard lock(store->mu);
            auto r = store->transcript.refresh();
            if (r) {
                *out = std::move(*r);
            } else {
                *out = Failure{r.error(), r.error().message()};
            }
            return boost::system::error_code{};
        },
        [this, weak = weak_, out, store](boost::system::error_code) {
            auto host = weak.lock();
            if (!host) {
                return;
            }
            reading_ = false;
            if (store != host->journal().store() || opening_) {
                // Read from a file since opened again: its result is stale; look again.
                if (opening_) {
                    again_ = true;
                } else {
                    changed();
                }
                return;
            }
            if (!*out) {
                if (out->error().code == make_error_code(errc::conflict)) {
                    spdlog::info(
                        "seat {}: {} was truncated: read again", host->spec().id, file_.string());
                    open(/*reindex=*/true);
                    return;
                }
                spdlog::warn("seat {}: cannot follow: {}", host->spec().id, out->error().message);
            } else if (!(*out)->empty()) {
                std::uint64_t opened_turns = 0;
                auto& feed = host->feed();
                for (auto& frame : **out) {
                    feed.append(std::move(frame));
                    opened_turns += feed.window().opens_turn(feed.window().end() - 1) ? 1U : 0U;
                }
                host->touched(std::chrono::system_clock::now());
                feed.published();
                if (listing_.turns) {
                    auto& spec = host->spec();
                    spec.turns += opened_turns; // counted as they come (O(rows))
                    listing_.turns = spec.turns;
                }
                host->changed();
            }
            if (std::exchange(again_, false)) {
                changed();
            }
        });
    if (!queued) {
        reading_ = false;
        again_ = true; // the next change tries again
    }
}

void FileSource::count(std::shared_ptr<std::optional<TranscriptCount>> count) {
    // A file opened numbered from its end is counted in COUNT_STEP_BYTES steps on the writer
    // (the transcript's lock held only to start and to resolve), then its index and key are
    // kept; a count that disagrees with the numbering read from the end reopens the file under
    // a new epoch. Stops when the seat is closed or its file opened again.
    if (!count) {
        count = std::make_shared<std::optional<TranscriptCount>>();
        count_stop_ = std::make_shared<std::atomic<bool>>(false);
    }
    auto failed = std::make_shared<std::optional<boost::system::error_code>>();
    auto done = std::make_shared<bool>(false);
    auto origin = std::make_shared<std::optional<std::uint64_t>>();
    auto store = host_->journal().store();
    const bool queued = host_->journal().submit(
        [store,
         count,
         failed,
         done,
         origin,
         file = file_,
         dir = host_->options().dir,
         epoch = host_->spec().epoch,
         stop = count_stop_]() {
            if (*stop) {
                return boost::system::error_code{};
            }
            if (!*count) {
                std::lock_guard lock(store->mu);
                auto c = store->transcript.start_count();
                if (!c) {
                    *failed = c.error();
                    return boost::system::error_code{};
                }
                count->emplace(std::move(*c));
            }
            auto step = (*count)->step(COUNT_STEP_BYTES);
            if (!step) {
                *failed = step.error();
            } else if (*step) {
                *done = true;
                std::lock_guard lock(store->mu);
                if (auto r = store->transcript.resolve(std::move(**count)); !r) {
                    *failed = r.error();
                } else if (store->transcript.counted()) {
                    *origin = store->transcript.origin();
                    keep_key(file, dir, store->transcript.size_bytes(), epoch);
                }
            }
            return boost::system::error_code{};
        },
        [this, weak = weak_, store, count, failed, done, origin](boost::system::error_code) {
            auto host = weak.lock();
            if (!host || host->closed() || store != host->journal().store() || opening_) {
                return; // the file is being opened again: its own count follows
            }
            if (*failed) {
                if (**failed == make_error_code(errc::conflict)) {
                    spdlog::info(
                        "seat {}: {} changed before its count ended: read again",
                        host->spec().id,
                        file_.string());
                    open(/*reindex=*/true);
                } else {
                    spdlog::warn(
                        "seat {}: cannot count {}: {}",
                        host->spec().id,
                        file_.string(),
                        failed->value().message());
                }
                return;
            }
            if (!*done) {
                this->count(count);
            } else if (*origin) {
                origin_ = *origin; // search hits in it now name their seq (search_api)
                host->changed();
            }
        });
    if (!queued) {
        spdlog::warn("seat {}: the disk queue is full: its count waits", host_->spec().id);
    }
}

} // namespace sluice::hub
