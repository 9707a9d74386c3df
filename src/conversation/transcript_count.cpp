// Transcript numbered from the end: opened without a count, counted later step by step, resolved.
#include "lines.hpp"

#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <unistd.h>

#include <algorithm>

namespace sluice {

using boost::system::result;

struct TranscriptCount::State {
    State(int fd_in, std::uint64_t end_in)
        : fd(fd_in)
        , end(end_in)
        , lines_in(fd_in, 0, end_in) {}

    State(const State&) = delete;
    State& operator=(const State&) = delete;
    State(State&&) = delete;
    State& operator=(State&&) = delete;

    ~State() {
        if (fd >= 0) {
            ::close(fd);
        }
    }

    int fd;
    std::uint64_t end; // the transcript's end when it was opened
    detail::ForwardLines lines_in;
    RowScanner rows;
    std::uint64_t frames{}, lines{};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> checkpoints; // (offset, line) per 1024
    // The frame read from the end whose position the count must confirm: its offset, and the
    // number of frames the count finds before it.
    std::optional<std::uint64_t> probe_offset;
    std::uint64_t probe_pos{};
    std::optional<std::uint64_t> probe_before;
    bool done{false};
};

TranscriptCount::TranscriptCount(std::unique_ptr<State> s)
    : state_(std::move(s)) {
}

TranscriptCount::TranscriptCount(TranscriptCount&&) noexcept = default;
TranscriptCount& TranscriptCount::operator=(TranscriptCount&&) noexcept = default;
TranscriptCount::~TranscriptCount() = default;

result<bool> TranscriptCount::step(std::uint64_t bytes) {
    auto& s = *state_;
    const std::uint64_t stop = std::min(s.end, s.lines_in.position() + bytes);
    // The same rule as the count on open (`Transcript::count`): a line is a frame when it sniffs
    // as one and is valid JSON, which is what the readers number.
    while (!s.done && s.lines_in.position() < stop) {
        auto l = s.lines_in.next();
        if (!l) {
            s.done = true;
            break;
        }
        if (detail::is_frame_line(s.rows, l->text)) {
            if (s.probe_offset && l->offset == *s.probe_offset) {
                s.probe_before = s.frames;
            }
            if (s.frames % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
                s.checkpoints.emplace_back(l->offset, s.lines);
            }
            ++s.frames;
        }
        ++s.lines;
    }
    if (s.lines_in.failed()) {
        return result<bool>(boost::system::in_place_error, make_error_code(errc::io_error));
    }
    s.done = s.done || s.lines_in.position() >= s.end;
    return s.done;
}

std::pair<std::uint64_t, std::uint64_t> TranscriptCount::progress() const noexcept {
    return {state_->lines_in.position(), state_->end};
}

void Transcript::open_uncounted() {
    counted_ = false;
    origin_ = 0;
    checkpoints_.clear();
    openings_.clear();
    pending_index_.clear();
    low_.reset();
    open_end_ = end_;
    // Upper bounds: every frame line takes at least TRANSCRIPT_MIN_FRAME_LINE_BYTES, every line
    // at least its newline (and a last one may lack it).
    open_frames_ = frames_ = end_ / TRANSCRIPT_MIN_FRAME_LINE_BYTES + 1;
    open_lines_ = lines_ = end_ + 1;
}

result<void> Transcript::reached_start(std::uint64_t line_origin) {
    for (auto& b : bad_lines_) {
        b.line -= line_origin; // noted with end-relative line numbers
    }
    return count();
}

void Transcript::note_low(const Checkpoint& c) {
    if (!low_ || c.pos < low_->pos) {
        low_ = c;
    }
}

result<TranscriptCount> Transcript::start_count() const {
    if (counted_) {
        return make_error_code(errc::conflict);
    }
    const int fd = ::dup(fd_); // the file opened, even if its path now names another
    if (fd < 0) {
        return make_error_code(errc::io_error);
    }
    auto s = std::make_unique<TranscriptCount::State>(fd, open_end_);
    if (low_) {
        s->probe_offset = low_->offset;
        s->probe_pos = low_->pos;
    }
    return TranscriptCount(std::move(s));
}

result<void> Transcript::resolve(TranscriptCount&& count) {
    if (counted_ || !count.state_ || !count.state_->done || count.state_->end != open_end_) {
        return make_error_code(errc::bad_request);
    }
    const auto& s = *count.state_;
    if (s.frames > open_frames_ || s.lines > open_lines_) {
        return make_error_code(errc::conflict);
    }
    const std::uint64_t origin = open_frames_ - s.frames;
    const std::uint64_t line_origin = open_lines_ - s.lines;
    if (s.probe_offset && (!s.probe_before || *s.probe_before + origin != s.probe_pos)) {
        // The frames read from the end were numbered otherwise than the count numbers them.
        return make_error_code(errc::conflict);
    }
    std::vector<Checkpoint> cps;
    cps.reserve(s.checkpoints.size() + checkpoints_.size());
    for (std::size_t i = 0; i < s.checkpoints.size(); ++i) {
        // Every TRANSCRIPT_CHECKPOINT_FRAMES frames from the file's first, at `origin`.
        const auto [offset, line] = s.checkpoints[i];
        cps.push_back({origin + i * TRANSCRIPT_CHECKPOINT_FRAMES, offset, line});
    }
    for (const auto& c : checkpoints_) {
        if (c.pos >= open_frames_) { // appended since it was opened
            cps.push_back({c.pos, c.offset, c.line - line_origin});
        }
    }
    checkpoints_ = std::move(cps);
    lines_ -= line_origin;
    for (auto& b : bad_lines_) {
        b.line -= line_origin;
    }
    origin_ = origin;
    counted_ = true;
    low_.reset();
    if (index_writable()) {
        return write_index(false);
    }
    return {};
}

result<std::pair<std::uint64_t, std::uint64_t>> Transcript::frame_span_back(std::uint64_t pos) {
    // Not counted yet: back from the nearest known frame after `pos` (a checkpoint, the oldest
    // frame read so far, or the end), numbering as the reads from the end do.
    const Checkpoint anchor = anchor_at_or_after(pos + 1);
    detail::BackwardLines r(fd_, anchor.offset, open_tail_ && anchor.offset == end_);
    std::uint64_t at = anchor.pos;
    while (auto l = r.prev()) {
        if (!detail::is_frame_line(l->text)) {
            continue;
        }
        if (--at == pos) {
            return std::pair<std::uint64_t, std::uint64_t>{l->offset, l->text.size()};
        }
    }
    return make_error_code(r.failed() ? errc::io_error : errc::not_found);
}

} // namespace sluice
