// Transcript: the scans over the whole file (the count on open, openings, the index build) and
// the rows another process appended (refresh).
#include "lines.hpp"

#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

namespace sluice {

using boost::system::result;

namespace {

constexpr std::uint64_t PROGRESS_EVERY = 64ULL << 20;

/// Reports a whole-file scan's position to `progress` (when set) every PROGRESS_EVERY bytes.
class ScanProgress {
public:
    ScanProgress(
        const std::function<void(std::uint64_t, std::uint64_t)>& progress,
        std::uint64_t end) noexcept
        : progress_(progress)
        , end_(end) {}

    void at(std::uint64_t position) {
        if (progress_ && position >= next_) {
            progress_(position, end_);
            next_ += PROGRESS_EVERY;
        }
    }

private:
    const std::function<void(std::uint64_t, std::uint64_t)>& progress_;
    std::uint64_t end_;
    std::uint64_t next_{PROGRESS_EVERY};
};
} // namespace

result<void> Transcript::count() {
    checkpoints_.clear();
    openings_.clear();
    pending_index_.clear();
    frames_ = 0;
    lines_ = 0;
    origin_ = 0;
    counted_ = true;
    low_.reset();
    detail::ForwardLines r(fd_, 0, end_);
    ScanProgress progress(options_.progress, end_);
    RowScanner rows; // validates most rows faster than Boost.JSON; the count is the same
    while (auto l = r.next()) {
        if (detail::is_frame_line(rows, l->text)) {
            note(frames_, l->offset, lines_, false);
            ++frames_;
        }
        ++lines_;
        progress.at(r.position());
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    pending_index_.clear();
    if (index_writable()) {
        return write_index(false);
    }
    return {};
}

result<void> Transcript::scan_file(
    TurnScan& scan,
    std::uint64_t& lines,
    const std::function<void(const ScannedFrame&)>& on_frame) {
    detail::ForwardLines r(fd_, 0, end_);
    std::uint64_t line = 0;
    std::uint64_t pos = 0;
    ScanProgress progress(options_.progress, end_);
    // Rows are read by the row scanner (validated, only the turn scan's fields read); a row it
    // is not sure of (not JSON, too deep or large) is parsed in full, which reports it as before.
    RowScanner rows;
    std::string type;
    TurnFacts facts;
    while (auto l = r.next()) {
        switch (options_.row_scan ? rows.scan(l->text, type, facts) : RowKind::unsure) {
        case RowKind::frame:
            on_frame({pos, l->offset, line, scan.opens_turn(type, facts)});
            ++pos;
            break;
        case RowKind::not_frame:
            break;
        case RowKind::unsure: {
            auto f = parse_line(l->text, line);
            if (!f) {
                return f.error();
            }
            if (*f) {
                on_frame({pos, l->offset, line, scan.opens_turn(**f)});
                ++pos;
            }
            break;
        }
        }
        ++line;
        progress.at(r.position());
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    lines = line;
    return {};
}

result<void> Transcript::rescan() {
    if (!counted_) {
        return make_error_code(errc::conflict); // end-relative positions: `resolve` first
    }
    bad_lines_.clear();
    bad_lines_total_ = 0;
    std::vector<Checkpoint> cps;
    std::vector<Checkpoint> ops;
    TurnScan scan;
    std::uint64_t lines = 0;
    std::uint64_t frames = origin_;
    auto r = scan_file(scan, lines, [&](const ScannedFrame& f) {
        const auto pos = origin_ + f.pos;
        if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
            cps.push_back({pos, f.offset, f.line});
        }
        if (f.opens_turn) {
            ops.push_back({pos, f.offset, f.line});
        }
        frames = pos + 1;
    });
    if (!r) {
        return r.error();
    }
    checkpoints_ = std::move(cps);
    openings_ = std::move(ops);
    frames_ = frames;
    lines_ = lines;
    scan_ = scan;
    return {};
}

result<std::vector<std::uint64_t>> Transcript::openings() {
    if (auto r = rescan(); !r) {
        return r.error();
    }
    std::vector<std::uint64_t> out;
    out.reserve(openings_.size());
    for (const auto& o : openings_) {
        out.push_back(o.pos);
    }
    return out;
}

result<void> Transcript::build_index() {
    if (auto r = rescan(); !r) {
        return r.error();
    }
    if (!index_writable()) {
        return options_.read_only ? make_error_code(errc::conflict) : result<void>{};
    }
    return write_index(true);
}

result<std::vector<FramePtr>> Transcript::refresh() {
    struct stat st {};

    if (::fstat(fd_, &st) != 0) {
        return make_error_code(errc::io_error);
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < end_) {
        return make_error_code(errc::conflict); // truncated under us
    }
    std::vector<FramePtr> out;
    if (size <= end_) {
        torn_bytes_ = size - end_;
        return out;
    }
    if (auto r = warm_scan(); !r) {
        return r.error();
    }
    // Whole lines only: up to the last newline of what was appended (bounded per call).
    constexpr std::uint64_t MAX_STEP = 64ULL << 20;
    std::string buf(static_cast<std::size_t>(std::min(size - end_, MAX_STEP)), '\0');
    if (!pread_all(fd_, buf.data(), buf.size(), end_)) {
        return make_error_code(errc::io_error);
    }
    const void* nl = ::memrchr(buf.data(), '\n', buf.size());
    if (nl == nullptr) {
        torn_bytes_ = size - end_;
        return out; // a line still being written: waited for
    }
    const auto whole = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
    std::size_t at = 0;
    while (at < whole) {
        const auto* e = static_cast<const char*>(::memchr(buf.data() + at, '\n', whole - at));
        const auto len = static_cast<std::size_t>(e - (buf.data() + at));
        const std::string_view text(buf.data() + at, len);
        const std::uint64_t offset = end_ + at;
        auto f = parse_line(text, lines_);
        if (!f) {
            return f.error();
        }
        if (*f) {
            note(frames_, offset, lines_, scan_->opens_turn(**f));
            ++frames_;
            out.push_back(std::move(*f));
        }
        ++lines_;
        at += len + 1;
    }
    end_ += whole;
    torn_bytes_ = size - end_;
    open_tail_ = false;
    return out;
}

} // namespace sluice
