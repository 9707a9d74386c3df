// Transcript reads: the resume window and pages below a cursor from the end, O(window) / O(page);
// one whole frame by position (for an oversize frame's full form), and byte ranges.
#include "transcript_parts.hpp"

#include <sluice/core/error.hpp>

#include <algorithm>
#include <deque>

namespace sluice {

using boost::system::result;

result<void> Transcript::reached_start(std::uint64_t line_origin) {
    parts_->rows.renumber(line_origin); // noted with end-relative line numbers
    return count();
}

result<Window> Transcript::load_window(const Budget& budget, Shed* shed) {
    auto& p = *parts_;
    detail::BackwardLines r(p.file.fd(), p.file.end(), p.file.open_tail());
    std::uint64_t line = p.index.lines();
    HeldFrames region;
    std::vector<FramePtr> warm; // older frames that only warm the turn scan up
    std::uint64_t bytes = 0;
    bool enough = false;
    bool at_start = true;        // the read went back to the file's first line
    detail::Checkpoint oldest{}; // the oldest frame read: offset and line (its position follows)
    while (auto l = r.prev()) {
        auto f = p.rows.parse(l->text, --line, p.index.counted());
        if (!f) {
            return f.error();
        }
        if (!*f) {
            continue;
        }
        oldest = {0, l->offset, line};
        if (!enough) {
            bytes += (*f)->wire_bytes();
            region.push_front({std::move(*f), false});
            // Past cap + slack no cut can keep anything older.
            enough = budget.past_ceiling(region.size(), bytes);
        } else {
            warm.push_back(std::move(*f));
            if (warm.size() >= TURN_SCAN_WARMUP) {
                at_start = false;
                break;
            }
        }
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    if (!p.index.counted()) {
        if (at_start && !p.index.low() && p.index.frames() == p.index.open_frames()) {
            // The whole file was read: number it from 0, as a count on open would.
            if (auto c = reached_start(line); !c) {
                return c.error();
            }
        } else if (!region.empty()) {
            oldest.pos = p.index.frames() - region.size() - warm.size();
            p.index.note_low(oldest);
        }
    }
    TurnScan scan;
    for (auto it = warm.rbegin(); it != warm.rend(); ++it) {
        scan.opens_turn(**it);
    }
    for (auto& h : region) {
        h.opens = scan.opens_turn(*h.frame);
    }
    if (!p.scan) {
        p.scan = scan;
    }
    std::uint64_t first = p.index.frames() - region.size();
    if (shed != nullptr) {
        *shed = Shed{first, 0};
    }
    if (budget.past_ceiling(region.size(), bytes)) {
        const std::size_t cut = cut_point(region, budget);
        if (shed != nullptr) {
            *shed = Shed{first + cut, shed_thinking(region, cut)};
        }
        region.erase(region.begin(), region.begin() + static_cast<std::ptrdiff_t>(cut));
        first += cut;
    }
    return Window::restore(budget, first, std::move(region), scan);
}

namespace {

bool candidate(const Frame& f) {
    const auto role = f.facts().role;
    return !f.facts().subagent
           && (role == FrameRole::prompt || role == FrameRole::command || role == FrameRole::image);
}

// Defined below Transcript::page.
Page group_turns(
    const HeldFrames& region,
    std::size_t warm,
    std::uint64_t region_first,
    std::size_t max_turns,
    std::uint64_t max_bytes);

} // namespace

result<Page>
Transcript::page(std::uint64_t before, std::size_t max_turns, std::uint64_t max_bytes) {
    auto& p = *parts_;
    max_turns = std::clamp<std::size_t>(max_turns, 1, SUBSCRIBE_TURNS);
    before = std::min(before, p.index.frames());
    if (before == 0) {
        return Page{};
    }
    const auto anchor = p.index.at_or_after(before, p.file.end());
    detail::BackwardLines r(
        p.file.fd(), anchor.offset, p.file.open_tail() && anchor.offset == p.file.end());
    std::uint64_t line = anchor.line;
    std::uint64_t pos = anchor.pos;
    HeldFrames region;          // frames before `before`, oldest first
    std::size_t warm = 0;       // the oldest `warm` frames of region only warm the scan up
    std::uint64_t bytes = 0;    // wire bytes of region past the warm-up
    std::size_t candidates = 0; // frames past the warm-up that may open a turn
    std::size_t target = max_turns;
    bool at_start = false;
    std::deque<detail::Checkpoint> where; // not counted yet: where each frame of region is
    for (;;) {
        // Read back until enough candidate openings (or bytes), then a warm-up.
        while (warm < TURN_SCAN_WARMUP) {
            auto l = r.prev();
            if (!l) {
                at_start = true;
                break;
            }
            auto f = p.rows.parse(l->text, --line, p.index.counted());
            if (!f) {
                return f.error();
            }
            if (!*f) {
                continue;
            }
            if (--pos >= before) {
                continue;
            }
            const bool collecting = candidates < target && bytes <= max_bytes;
            region.push_front({*f, false});
            if (!p.index.counted()) {
                where.push_front({pos, l->offset, line});
            }
            if (collecting) {
                bytes += (*f)->wire_bytes();
                candidates += candidate(**f) ? 1U : 0U;
            } else {
                ++warm;
            }
        }
        if (r.failed()) {
            return make_error_code(errc::io_error);
        }
        TurnScan scan;
        std::size_t real = 0;
        for (std::size_t i = 0; i < region.size(); ++i) {
            region[i].opens = scan.opens_turn(*region[i].frame);
            real += (i >= warm && region[i].opens) ? 1U : 0U;
        }
        if (real >= max_turns || bytes > max_bytes || at_start) {
            break;
        }
        // Some candidates were not openings: the warm-up joins the page and reading goes on.
        for (std::size_t i = 0; i < warm; ++i) {
            bytes += region[i].frame->wire_bytes();
            candidates += candidate(*region[i].frame) ? 1U : 0U;
        }
        warm = 0;
        target = candidates + (max_turns - real);
    }
    const std::uint64_t region_first = before - region.size();
    auto page = group_turns(region, warm, region_first, max_turns, max_bytes);
    if (at_start && page.cursor && *page.cursor <= region_first) {
        page.cursor.reset(); // the file's first frame (end-relative positions do not end at 0)
    }
    if (!p.index.counted() && page.cursor) {
        p.index.note_low(
            where.at(*page.cursor - region_first)); // the next page reads back from here
    }
    return page;
}

namespace {

// Groups the frames of `region` past the warm-up into whole turns, newest first, within the
// byte budget (split from Transcript::page to keep each under the complexity limit).
Page group_turns(
    const HeldFrames& region,
    std::size_t warm,
    std::uint64_t region_first,
    std::size_t max_turns,
    std::uint64_t max_bytes) {
    Page page;
    std::size_t hi = region.size();
    std::uint64_t total = 0;
    while (hi > warm && page.turns.size() < max_turns) {
        std::size_t lo = hi - 1;
        while (lo > warm && !region[lo].opens) {
            --lo;
        }
        std::uint64_t group = 0;
        for (std::size_t i = lo; i < hi; ++i) {
            group += region[i].frame->wire_bytes();
        }
        if (total + group > max_bytes) {
            if (!page.turns.empty()) {
                break;
            }
            // One turn heavier than the page: its newest frames, at least one.
            std::size_t from = hi - 1;
            std::uint64_t acc = region[from].frame->wire_bytes();
            while (from > lo && acc + region[from - 1].frame->wire_bytes() <= max_bytes) {
                acc += region[--from].frame->wire_bytes();
            }
            lo = from;
        }
        PageTurn t{region_first + lo, {}};
        for (std::size_t i = lo; i < hi; ++i) {
            t.frames.push_back(region[i].frame);
            total += region[i].frame->wire_bytes();
        }
        page.turns.push_back(std::move(t));
        hi = lo;
        if (total >= max_bytes) {
            break;
        }
    }
    std::reverse(page.turns.begin(), page.turns.end());
    if (!page.turns.empty() && page.turns.front().first > 0) {
        page.cursor = page.turns.front().first;
    }
    return page;
}

} // namespace

result<std::pair<std::uint64_t, std::uint64_t>> Transcript::frame_span(std::uint64_t pos) {
    const auto& p = *parts_;
    if (pos >= p.index.frames() || pos < p.index.origin()) {
        return make_error_code(errc::not_found);
    }
    if (!p.index.counted()) {
        return frame_span_back(pos);
    }
    // Forward from the nearest checkpoint at or before `pos` (else the file's start).
    const auto from = p.index.at_or_before(pos);
    std::uint64_t at = from.pos;
    detail::ForwardLines r(p.file.fd(), from.offset, p.file.end());
    while (auto l = r.next()) {
        // Counted: a frame row sniffs as one (its line was validated when it was counted).
        if (p.options.format == RowFormat::frames
                ? !detail::sniff_is_frame(l->text)
                : !detail::is_frame_line(p.options.format, l->text)) {
            continue;
        }
        if (at == pos) {
            return std::pair<std::uint64_t, std::uint64_t>{l->offset, l->text.size()};
        }
        ++at;
    }
    return make_error_code(r.failed() ? errc::io_error : errc::not_found);
}

result<std::pair<std::uint64_t, std::uint64_t>> Transcript::frame_span_back(std::uint64_t pos) {
    // Not counted yet: back from the nearest known frame after `pos` (a checkpoint, the oldest
    // frame read so far, or the end), numbering as the reads from the end do.
    const auto& p = *parts_;
    const auto anchor = p.index.at_or_after(pos + 1, p.file.end());
    detail::BackwardLines r(
        p.file.fd(), anchor.offset, p.file.open_tail() && anchor.offset == p.file.end());
    std::uint64_t at = anchor.pos;
    while (auto l = r.prev()) {
        if (!detail::is_frame_line(p.options.format, l->text)) {
            continue;
        }
        if (--at == pos) {
            return std::pair<std::uint64_t, std::uint64_t>{l->offset, l->text.size()};
        }
    }
    return make_error_code(r.failed() ? errc::io_error : errc::not_found);
}

result<std::string> Transcript::frame_json(std::uint64_t pos) {
    auto span = frame_span(pos);
    if (!span) {
        return span.error();
    }
    auto text = read_bytes(span->first, span->second);
    if (!text || parts_->options.format == RowFormat::frames) {
        return text;
    }
    auto f = detail::line_frame(parts_->options.format, *text);
    if (!f || !*f) {
        return make_error_code(errc::io_error); // it was a frame when it was numbered
    }
    return std::string((*f)->json());
}

result<std::string> Transcript::read_bytes(std::uint64_t offset, std::uint64_t n) const {
    return parts_->file.read(offset, n);
}

} // namespace sluice
