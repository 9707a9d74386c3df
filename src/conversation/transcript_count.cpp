// A transcript numbered from its end: opened without a count, counted later step by step, resolved.
#include "transcript_index.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <unistd.h>

#include <algorithm>

namespace sluice {

using boost::system::result;

namespace detail {

TranscriptCounter::TranscriptCounter(
    int fd, std::uint64_t end, std::optional<Checkpoint> probe, RowFormat format)
    : fd_(fd)
    , end_(end)
    , lines_in_(fd, 0, end)
    , rows_(format)
    , probe_(probe) {
}

result<bool> TranscriptCounter::step(std::uint64_t bytes) {
    const std::uint64_t stop = std::min(end_, lines_in_.position() + bytes);
    // The same rule as the count on open (`TranscriptIndex::count`): a line is a frame when it
    // sniffs as one and is valid JSON, which is what the readers number.
    while (!done_ && lines_in_.position() < stop) {
        auto l = lines_in_.next();
        if (!l) {
            done_ = true;
            break;
        }
        if (rows_.is_frame(l->text)) {
            if (probe_ && l->offset == probe_->offset) {
                probe_before_ = frames_;
            }
            if (frames_ % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
                checkpoints_.emplace_back(l->offset, lines_);
            }
            ++frames_;
        }
        ++lines_;
    }
    if (lines_in_.failed()) {
        return result<bool>(boost::system::in_place_error, make_error_code(errc::io_error));
    }
    done_ = done_ || lines_in_.position() >= end_;
    return done_;
}

std::pair<std::uint64_t, std::uint64_t> TranscriptCounter::progress() const noexcept {
    return {lines_in_.position(), end_};
}

bool TranscriptCounter::confirms(std::uint64_t origin) const noexcept {
    return !probe_ || (probe_before_ && *probe_before_ + origin == probe_->pos);
}

void TranscriptIndex::open_uncounted(std::uint64_t end) noexcept {
    counted_ = false;
    origin_ = 0;
    checkpoints_.clear();
    openings_.clear();
    pending_.clear();
    low_.reset();
    open_end_ = end;
    // Upper bounds: every frame line takes at least TRANSCRIPT_MIN_FRAME_LINE_BYTES, every line
    // at least its newline (and a last one may lack it).
    open_frames_ = frames_ = end / TRANSCRIPT_MIN_FRAME_LINE_BYTES + 1;
    open_lines_ = lines_ = end + 1;
}

void TranscriptIndex::note_low(const Checkpoint& c) {
    if (!low_ || c.pos < low_->pos) {
        low_ = c;
    }
}

result<std::unique_ptr<TranscriptCounter>> TranscriptIndex::start_count(int fd) const {
    if (counted_) {
        return make_error_code(errc::conflict);
    }
    const int copy = ::dup(fd); // the file opened, even if its path now names another
    if (copy < 0) {
        return make_error_code(errc::io_error);
    }
    return std::make_unique<TranscriptCounter>(copy, open_end_, low_, format_);
}

result<std::uint64_t> TranscriptIndex::resolve(const TranscriptCounter& count) {
    if (counted_ || !count.done() || count.end() != open_end_) {
        return make_error_code(errc::bad_request);
    }
    if (count.frames() > open_frames_ || count.lines() > open_lines_) {
        return make_error_code(errc::conflict);
    }
    const std::uint64_t origin = open_frames_ - count.frames();
    const std::uint64_t line_origin = open_lines_ - count.lines();
    if (!count.confirms(origin)) {
        // The frames read from the end were numbered otherwise than the count numbers them.
        return make_error_code(errc::conflict);
    }
    std::vector<Checkpoint> cps;
    cps.reserve(count.checkpoints().size() + checkpoints_.size());
    for (std::size_t i = 0; i < count.checkpoints().size(); ++i) {
        // Every TRANSCRIPT_CHECKPOINT_FRAMES frames from the file's first, at `origin`.
        const auto [offset, line] = count.checkpoints()[i];
        cps.push_back({origin + i * TRANSCRIPT_CHECKPOINT_FRAMES, offset, line});
    }
    for (const auto& c : checkpoints_) {
        if (c.pos >= open_frames_) { // appended since it was opened
            cps.push_back({c.pos, c.offset, c.line - line_origin});
        }
    }
    checkpoints_ = std::move(cps);
    lines_ -= line_origin;
    origin_ = origin;
    counted_ = true;
    low_.reset();
    return line_origin;
}

} // namespace detail

TranscriptCount::TranscriptCount(std::unique_ptr<detail::TranscriptCounter> counter)
    : counter_(std::move(counter)) {
}

TranscriptCount::TranscriptCount(TranscriptCount&&) noexcept = default;
TranscriptCount& TranscriptCount::operator=(TranscriptCount&&) noexcept = default;
TranscriptCount::~TranscriptCount() = default;

result<bool> TranscriptCount::step(std::uint64_t bytes) {
    return counter_->step(bytes);
}

std::pair<std::uint64_t, std::uint64_t> TranscriptCount::progress() const noexcept {
    return counter_->progress();
}

} // namespace sluice
