// A transcript's numbering: the sidecar's format, its load and writes, the count on open.
#include "transcript_index.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/core/safe_write.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace sluice::detail {

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

} // namespace

void TranscriptIndex::note(
    std::uint64_t pos, std::uint64_t offset, std::uint64_t line, bool opens) {
    if (!counted_) {
        // Positions are end-relative, lines not yet known: the index is written by `resolve`.
        if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
            checkpoints_.push_back({pos, offset, line});
        }
        return;
    }
    if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
        checkpoints_.push_back({pos, offset, line});
        put_record(pending_, {REC_CHECKPOINT, pos, offset, line});
    }
    if (opens) {
        openings_.push_back({pos, offset, line});
        put_record(pending_, {REC_OPENING, pos, offset, line});
    }
}

void TranscriptIndex::add_frame(std::uint64_t offset, bool opens) {
    note(frames_, offset, lines_, opens);
    ++frames_;
}

bool TranscriptIndex::load(
    const std::filesystem::path& ipath, int file_fd, std::uint64_t end, bool writable) {
    loaded_ = false;
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
    if (!mark || mark->b > end) {
        return false;
    }
    if (mark->b > 0) {
        char c = 0;
        if (!pread_all(file_fd, &c, 1, mark->b - 1) || c != '\n') {
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
    if (writable) {
        fd_.reset(::open(ipath.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
        if (fd_.get() >= 0 && bytes_at_mark < data.size()) {
            if (::ftruncate(fd_.get(), static_cast<off_t>(bytes_at_mark)) != 0) {
                fd_.reset();
            }
        }
    }
    // Catch up on rows appended after the index was last written (no parse: counting only).
    ForwardLines r(file_fd, mark->b, end);
    FrameLines rows(format_);
    while (auto l = r.next()) {
        if (rows.is_frame(l->text)) {
            add_frame(l->offset, false);
        }
        add_line();
    }
    loaded_ = !r.failed();
    return loaded_;
}

result<void> TranscriptIndex::count(int fd, std::uint64_t end, const ScanProgressFn& progress_fn) {
    checkpoints_.clear();
    openings_.clear();
    pending_.clear();
    frames_ = 0;
    lines_ = 0;
    origin_ = 0;
    counted_ = true;
    low_.reset();
    ForwardLines r(fd, 0, end);
    ScanProgress progress(progress_fn, end);
    FrameLines rows(format_); // validates most rows faster than Boost.JSON; the count is the same
    while (auto l = r.next()) {
        if (rows.is_frame(l->text)) {
            add_frame(l->offset, false);
        }
        add_line();
        progress.at(r.position());
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    pending_.clear();
    return {};
}

void TranscriptIndex::replace(
    std::vector<Checkpoint> checkpoints,
    std::vector<Checkpoint> openings,
    std::uint64_t frames,
    std::uint64_t lines) noexcept {
    checkpoints_ = std::move(checkpoints);
    openings_ = std::move(openings);
    frames_ = frames;
    lines_ = lines;
}

result<void>
TranscriptIndex::write(const std::filesystem::path& ipath, std::uint64_t end, bool with_openings) {
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
    put_record(out, {REC_MARK, frames_, end, lines_});
    fd_.reset();
    if (auto r = safe_write(ipath, std::string_view(out.data(), out.size())); !r) {
        return r.error();
    }
    pending_.clear();
    fd_.reset(::open(ipath.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    return {};
}

result<void> TranscriptIndex::sync(const std::filesystem::path& ipath, std::uint64_t end) {
    if (fd_.get() < 0) {
        return write(ipath, end, true);
    }
    put_record(pending_, {REC_MARK, frames_, end, lines_});
    if (auto ec = write_all(fd_.get(), std::string_view(pending_.data(), pending_.size()))) {
        // The index is a cache: a torn record is dropped on the next open (it ends at the last
        // whole mark), so the next sync rewrites it whole.
        pending_.clear();
        fd_.reset();
        return ec;
    }
    pending_.clear();
    return {};
}

Checkpoint TranscriptIndex::at_or_after(std::uint64_t pos, std::uint64_t end) const {
    auto it = std::lower_bound(
        checkpoints_.begin(), checkpoints_.end(), pos, [](const Checkpoint& c, std::uint64_t p) {
            return c.pos < p;
        });
    Checkpoint a = it != checkpoints_.end() ? *it : Checkpoint{frames_, end, lines_};
    if (low_ && low_->pos >= pos && low_->pos < a.pos) {
        a = *low_; // not counted yet: the oldest frame a read from the end reached
    }
    return a;
}

Checkpoint TranscriptIndex::at_or_before(std::uint64_t pos) const {
    auto it = std::upper_bound(
        checkpoints_.begin(), checkpoints_.end(), pos, [](std::uint64_t p, const Checkpoint& c) {
            return p < c.pos;
        });
    if (it == checkpoints_.begin()) {
        return {origin_, 0, 0}; // the file's first frame
    }
    return *--it;
}

} // namespace sluice::detail
