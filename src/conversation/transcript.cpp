// Transcript: open (torn tail, index or count), append and sync, index files, full scans.
#include "lines.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>
#include <sluice/core/safe_write.hpp>

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace sluice {

using boost::system::result;

namespace {

constexpr std::array<char, 8> INDEX_MAGIC = {'S', 'L', 'U', 'I', 'C', 'E', 'I', 'X'};
constexpr std::uint64_t INDEX_VERSION = 1;
constexpr std::uint64_t REC_CHECKPOINT = 1;
constexpr std::uint64_t REC_OPENING = 2;
constexpr std::uint64_t REC_MARK = 3;
constexpr std::uint64_t REC_ORIGIN = 4; // the position of the file's first frame, when not 0

struct Record {
    std::uint64_t kind, a, b, c;
};

void put_record(std::vector<char>& out, Record r) {
    const std::array<std::uint64_t, 4> v = {r.kind, r.a, r.b, r.c};
    const auto* p = reinterpret_cast<const char*>(v.data());
    out.insert(out.end(), p, p + sizeof(v));
}

boost::system::error_code io_error() {
    return make_error_code(errc::io_error);
}

// Writes `a` then `b` whole (one writev while it takes both): a frame and its '\n' without
// copying the frame into a line first (an oversize frame is megabytes). Every byte or the OS
// reason (a zero-byte write, which POSIX allows only for n == 0, is EIO).
boost::system::error_code write_all(int fd, std::string_view a, std::string_view b) {
    while (!a.empty() || !b.empty()) {
        std::array<::iovec, 2> v{};
        int n = 0;
        for (const auto part : {a, b}) {
            if (!part.empty()) {
                // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): writev only reads it
                auto* base = const_cast<char*>(part.data());
                v.at(static_cast<std::size_t>(n++)) = {base, part.size()};
            }
        }
        const ssize_t w = ::writev(fd, v.data(), n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return last_os_error();
        }
        if (w == 0) {
            return {EIO, boost::system::system_category()};
        }
        auto took = static_cast<std::size_t>(w);
        const auto from_a = std::min(took, a.size());
        a.remove_prefix(from_a);
        took -= from_a;
        b.remove_prefix(took);
    }
    return {};
}

// Every byte of [p, p + n) or the OS reason.
boost::system::error_code write_all(int fd, const char* p, std::size_t n) {
    return write_all(fd, std::string_view(p, n), std::string_view{});
}

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

} // namespace

std::filesystem::path Transcript::index_path(const std::filesystem::path& transcript) {
    auto p = transcript;
    p += ".sidx";
    return p;
}

std::filesystem::path Transcript::index_file() const {
    return options_.index_file.empty() ? index_path(path_) : options_.index_file;
}

bool Transcript::index_writable() const noexcept {
    return options_.write_index && (!options_.read_only || !options_.index_file.empty());
}

Transcript::Transcript(Transcript&& o) noexcept
    : path_(std::move(o.path_))
    , options_(std::move(o.options_))
    , fd_(std::exchange(o.fd_, -1))
    , index_fd_(std::exchange(o.index_fd_, -1))
    , end_(o.end_)
    , frames_(o.frames_)
    , lines_(o.lines_)
    , torn_bytes_(o.torn_bytes_)
    , open_tail_(o.open_tail_)
    , index_valid_(o.index_valid_)
    , counted_(o.counted_)
    , origin_(o.origin_)
    , open_end_(o.open_end_)
    , open_frames_(o.open_frames_)
    , open_lines_(o.open_lines_)
    , low_(o.low_)
    , checkpoints_(std::move(o.checkpoints_))
    , openings_(std::move(o.openings_))
    , pending_index_(std::move(o.pending_index_))
    , scan_(std::move(o.scan_))
    , bad_line_(std::move(o.bad_line_))
    , bad_lines_(std::move(o.bad_lines_))
    , bad_lines_total_(o.bad_lines_total_) {
}

Transcript& Transcript::operator=(Transcript&& o) noexcept {
    if (this != &o) {
        close_fd(fd_);
        close_fd(index_fd_);
        path_ = std::move(o.path_);
        options_ = std::move(o.options_);
        fd_ = std::exchange(o.fd_, -1);
        index_fd_ = std::exchange(o.index_fd_, -1);
        end_ = o.end_;
        frames_ = o.frames_;
        lines_ = o.lines_;
        torn_bytes_ = o.torn_bytes_;
        open_tail_ = o.open_tail_;
        index_valid_ = o.index_valid_;
        counted_ = o.counted_;
        origin_ = o.origin_;
        open_end_ = o.open_end_;
        open_frames_ = o.open_frames_;
        open_lines_ = o.open_lines_;
        low_ = o.low_;
        checkpoints_ = std::move(o.checkpoints_);
        openings_ = std::move(o.openings_);
        pending_index_ = std::move(o.pending_index_);
        scan_ = std::move(o.scan_);
        bad_line_ = std::move(o.bad_line_);
        bad_lines_ = std::move(o.bad_lines_);
        bad_lines_total_ = o.bad_lines_total_;
    }
    return *this;
}

Transcript::~Transcript() {
    close_fd(fd_);
    close_fd(index_fd_);
}

result<Transcript> Transcript::open(std::filesystem::path path, TranscriptOptions options) {
    Transcript t;
    t.path_ = std::move(path);
    t.options_ = std::move(options);
    const int flags = t.options_.read_only ? O_RDONLY : (O_RDWR | O_CREAT | O_APPEND);
    t.fd_ = ::open(t.path_.c_str(), flags | O_CLOEXEC, 0644);
    if (t.fd_ < 0) {
        if (errno == EROFS || errno == EACCES || errno == EPERM) {
            return last_os_error(); // the caller may open it read-only instead
        }
        return make_error_code(
            errno == ENOENT   ? errc::not_found
            : errno == EISDIR ? errc::bad_request
                              : errc::io_error);
    }

    struct stat st {};

    if (::fstat(t.fd_, &st) != 0) {
        return io_error();
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error_code(errc::bad_request);
    }
    t.end_ = static_cast<std::uint64_t>(st.st_size);
    if (auto r = t.check_tail(); !r) {
        return r.error();
    }
    t.index_valid_ = t.load_index();
    if (!t.index_valid_ && t.options_.end_relative && t.end_ > 0) {
        t.open_uncounted();
    } else if (!t.index_valid_ && t.options_.count_on_open) {
        if (auto r = t.count(); !r) {
            return r.error();
        }
    }
    return t;
}

result<void> Transcript::check_tail() {
    if (end_ == 0) {
        return {};
    }
    char last = 0;
    if (!pread_all(fd_, &last, 1, end_ - 1)) {
        return io_error();
    }
    std::uint64_t good = end_;
    if (last != '\n' && options_.follow) {
        // Being written by its owner: wait for the newline (refresh), never cut it.
        std::array<char, 65536> buf{};
        std::uint64_t hi = end_;
        good = 0;
        while (hi > 0) {
            const std::uint64_t lo = hi > buf.size() ? hi - buf.size() : 0;
            if (!pread_all(fd_, buf.data(), hi - lo, lo)) {
                return io_error();
            }
            if (const void* nl = ::memrchr(buf.data(), '\n', hi - lo)) {
                good =
                    lo + static_cast<std::uint64_t>(static_cast<const char*>(nl) - buf.data()) + 1;
                break;
            }
            hi = lo;
        }
        torn_bytes_ = end_ - good;
        end_ = good;
        return {};
    }
    if (last != '\n') {
        auto piece = last_piece();
        if (!piece) {
            return io_error();
        }
        if (piece->second) {
            // A complete row that lacks only its newline: keep it (and, writable, add the newline).
            if (options_.read_only) {
                open_tail_ = true;
                return {};
            }
            if (auto ec = write_all(fd_, "\n", 1)) {
                return ec;
            }
            ++end_;
            return {};
        }
        good = piece->first;
    } else if (!options_.read_only) {
        // A complete last line that is not JSON is torn too; a reader reports it instead.
        detail::BackwardLines r(fd_, end_);
        auto l = r.prev();
        if (r.failed()) {
            return io_error();
        }
        boost::system::error_code ec;
        if (l && !l->text.empty()) {
            boost::json::parse(l->text, ec);
            if (ec) {
                good = l->offset;
            }
        }
    }
    if (good == end_) {
        return {};
    }
    torn_bytes_ = end_ - good;
    spdlog::warn(
        "transcript {}: a torn last line ({} bytes) is {}",
        path_.string(),
        torn_bytes_,
        options_.read_only ? "ignored" : "truncated away");
    if (!options_.read_only && ::ftruncate(fd_, static_cast<off_t>(good)) != 0) {
        return io_error();
    }
    end_ = good;
    return {};
}

std::optional<std::pair<std::uint64_t, bool>> Transcript::last_piece() const {
    // The piece after the last newline: its offset, and whether it is complete JSON.
    std::array<char, 65536> buf{};
    std::uint64_t hi = end_;
    std::uint64_t start = 0;
    while (hi > 0) {
        const std::uint64_t lo = hi > buf.size() ? hi - buf.size() : 0;
        if (!pread_all(fd_, buf.data(), hi - lo, lo)) {
            return std::nullopt;
        }
        if (const void* nl = ::memrchr(buf.data(), '\n', hi - lo)) {
            start = lo + static_cast<std::uint64_t>(static_cast<const char*>(nl) - buf.data()) + 1;
            break;
        }
        hi = lo;
    }
    if (end_ - start > (64ULL << 20)) {
        return std::pair{start, false}; // too large to check: treat as torn
    }
    std::string piece(static_cast<std::size_t>(end_ - start), '\0');
    if (!pread_all(fd_, piece.data(), piece.size(), start)) {
        return std::nullopt;
    }
    boost::system::error_code ec;
    boost::json::parse(piece, ec);
    return std::pair{start, !ec};
}

void Transcript::note(std::uint64_t pos, std::uint64_t offset, std::uint64_t line, bool opens) {
    if (!counted_) {
        // Positions are end-relative, lines not yet known: the index is written by `resolve`.
        if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
            checkpoints_.push_back({pos, offset, line});
        }
        return;
    }
    if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
        checkpoints_.push_back({pos, offset, line});
        put_record(pending_index_, {REC_CHECKPOINT, pos, offset, line});
    }
    if (opens) {
        openings_.push_back({pos, offset, line});
        put_record(pending_index_, {REC_OPENING, pos, offset, line});
    }
}

bool Transcript::load_index() {
    const auto ipath = index_file();
    int fd = ::open(ipath.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }

    struct stat st {};

    std::vector<char> data;
    if (::fstat(fd, &st) == 0 && st.st_size >= 16) {
        data.resize(static_cast<std::size_t>(st.st_size));
        if (!pread_all(fd, data.data(), data.size(), 0)) {
            data.clear();
        }
    }
    ::close(fd);
    std::uint64_t version = 0;
    if (data.size() < 16 || std::memcmp(data.data(), INDEX_MAGIC.data(), 8) != 0) {
        return false;
    }
    std::memcpy(&version, data.data() + 8, 8);
    if (version != INDEX_VERSION) {
        return false;
    }
    std::vector<Checkpoint> cps;
    std::vector<Checkpoint> ops;
    std::optional<Record> mark;
    std::uint64_t origin = 0;
    std::size_t cps_at_mark = 0;
    std::size_t ops_at_mark = 0;
    std::size_t bytes_at_mark = 16;
    for (std::size_t off = 16; off + 32 <= data.size(); off += 32) {
        Record r{};
        std::memcpy(&r, data.data() + off, 32);
        if (r.kind == REC_CHECKPOINT) {
            cps.push_back({r.a, r.b, r.c});
        } else if (r.kind == REC_OPENING) {
            ops.push_back({r.a, r.b, r.c});
        } else if (r.kind == REC_ORIGIN) {
            origin = r.a;
        } else if (r.kind == REC_MARK) {
            mark = r;
            cps_at_mark = cps.size();
            ops_at_mark = ops.size();
            bytes_at_mark = off + 32;
        } else {
            return false;
        }
    }
    if (!mark || mark->b > end_) {
        return false;
    }
    if (mark->b > 0) {
        char c = 0;
        if (!pread_all(fd_, &c, 1, mark->b - 1) || c != '\n') {
            return false;
        }
    }
    cps.resize(cps_at_mark);
    ops.resize(ops_at_mark);
    checkpoints_ = std::move(cps);
    openings_ = std::move(ops);
    frames_ = mark->a;
    lines_ = mark->c;
    origin_ = origin;
    if (index_writable()) {
        index_fd_ = ::open(ipath.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        if (index_fd_ >= 0 && bytes_at_mark < data.size()) {
            if (::ftruncate(index_fd_, static_cast<off_t>(bytes_at_mark)) != 0) {
                close_fd(index_fd_);
            }
        }
    }
    // Catch up on rows appended after the index was last written (no parse: counting only).
    detail::ForwardLines r(fd_, mark->b, end_);
    RowScanner rows;
    while (auto l = r.next()) {
        if (detail::is_frame_line(rows, l->text)) {
            note(frames_, l->offset, lines_, false);
            ++frames_;
        }
        ++lines_;
    }
    return !r.failed();
}

result<void> Transcript::write_index(bool with_openings) {
    std::vector<char> out(INDEX_MAGIC.begin(), INDEX_MAGIC.end());
    const auto* v = reinterpret_cast<const char*>(&INDEX_VERSION);
    out.insert(out.end(), v, v + 8);
    if (origin_ != 0) {
        put_record(out, {REC_ORIGIN, origin_, 0, 0});
    }
    for (const auto& c : checkpoints_) {
        put_record(out, {REC_CHECKPOINT, c.pos, c.offset, c.line});
    }
    if (with_openings) {
        for (const auto& c : openings_) {
            put_record(out, {REC_OPENING, c.pos, c.offset, c.line});
        }
    }
    put_record(out, {REC_MARK, frames_, end_, lines_});
    const auto ipath = index_file();
    close_fd(index_fd_);
    if (auto r = safe_write(ipath, std::string_view(out.data(), out.size())); !r) {
        return r.error();
    }
    pending_index_.clear();
    index_fd_ = ::open(ipath.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    return {};
}

void Transcript::note_bad(BadLine bad) {
    for (const auto& b : bad_lines_) {
        if (b.line == bad.line) {
            return; // read again (a window, then a page)
        }
    }
    ++bad_lines_total_;
    if (bad_lines_.size() < TRANSCRIPT_BAD_LINES_KEPT) {
        if (counted_) {
            spdlog::warn("transcript {}:{}: skipped: {}", path_.string(), bad.line, bad.what);
        } else { // numbered from the end: its line number is known once the file is counted
            spdlog::warn("transcript {}: a line skipped: {}", path_.string(), bad.what);
        }
        bad_lines_.push_back(std::move(bad));
    }
}

result<FramePtr> Transcript::parse_line(std::string_view text, std::uint64_t line) {
    if (text.empty()) {
        return FramePtr{};
    }
    auto f = Frame::parse(text);
    if (!f) {
        if (f.error() == make_error_code(errc::bad_request)) {
            return FramePtr{}; // JSON, but not an object: a row that is not a frame
        }
        BadLine bad{line + 1, "not JSON (" + f.error().message() + ")"};
        if (options_.strict) {
            bad_line_ = std::move(bad);
            return make_error_code(errc::corrupt_data);
        }
        note_bad(std::move(bad));
        return FramePtr{}; // skipped and reported, never served
    }
    if (!(*f)->is_frame()) {
        return FramePtr{};
    }
    return held_form(std::move(*f)); // what is read is held: an oversize frame's reference form
}

result<void> Transcript::warm_scan() {
    if (scan_) {
        return {};
    }
    std::vector<FramePtr> newest;
    detail::BackwardLines r(fd_, end_, open_tail_);
    while (newest.size() < TURN_SCAN_WARMUP) {
        auto l = r.prev();
        if (!l) {
            break;
        }
        auto f = Frame::parse(l->text);
        if (f && (*f)->is_frame()) {
            newest.push_back(*f);
        }
    }
    if (r.failed()) {
        return io_error();
    }
    TurnScan scan;
    for (auto it = newest.rbegin(); it != newest.rend(); ++it) {
        scan.opens_turn(**it);
    }
    scan_ = scan;
    return {};
}

result<void> Transcript::append(const Frame& f) {
    if (!f.is_frame()) {
        return make_error_code(errc::bad_request);
    }
    if (options_.read_only) {
        return make_error_code(errc::conflict);
    }
    if (auto r = warm_scan(); !r) {
        return r;
    }
    const bool opens = scan_->opens_turn(f);
    if (auto ec = write_all(fd_, f.json(), "\n")) {
        // Leave no torn piece behind for the next frame to follow.
        if (::ftruncate(fd_, static_cast<off_t>(end_)) != 0) {
            spdlog::error("transcript {}: a failed append could not be undone", path_.string());
        }
        return ec;
    }
    note(frames_, end_, lines_, opens);
    end_ += f.json().size() + 1;
    ++frames_;
    ++lines_;
    return {};
}

result<void> Transcript::sync() {
    if (!counted_ || (options_.read_only && !index_writable())) {
        return {};
    }
    if (!options_.read_only && ::fdatasync(fd_) != 0) {
        return last_os_error();
    }
    if (!index_writable()) {
        return {};
    }
    if (index_fd_ < 0) {
        return write_index(true);
    }
    put_record(pending_index_, {REC_MARK, frames_, end_, lines_});
    if (auto ec = write_all(index_fd_, pending_index_.data(), pending_index_.size())) {
        // The index is a cache: a torn record is dropped on the next open (it ends at the last
        // whole mark), so the next sync rewrites it whole.
        pending_index_.clear();
        close_fd(index_fd_);
        return ec;
    }
    pending_index_.clear();
    return {};
}

} // namespace sluice
