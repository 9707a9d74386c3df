// Transcript reads from the end: the resume window and pages below a cursor, O(window) / O(page).
#include "lines.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <algorithm>
#include <deque>

namespace sluice {

using boost::system::result;

Transcript::Checkpoint Transcript::anchor_at_or_after(std::uint64_t pos) const {
    auto it = std::lower_bound(
        checkpoints_.begin(), checkpoints_.end(), pos, [](const Checkpoint& c, std::uint64_t p) {
            return c.pos < p;
        });
    Checkpoint a = it != checkpoints_.end() ? *it : Checkpoint{frames_, end_, lines_};
    if (low_ && low_->pos >= pos && low_->pos < a.pos) {
        a = *low_; // not counted yet: the oldest frame a read from the end reached
    }
    return a;
}

result<Window> Transcript::load_window(const Budget& budget, Shed* shed) {
    detail::BackwardLines r(fd_, end_, open_tail_);
    std::uint64_t line = lines_;
    HeldFrames region;
    std::vector<FramePtr> warm; // older frames that only warm the turn scan up
    std::uint64_t bytes = 0;
    bool enough = false;
    bool at_start = true; // the read went back to the file's first line
    Checkpoint oldest{};  // the oldest frame read: offset and line (its position follows)
    while (auto l = r.prev()) {
        auto f = parse_line(l->text, --line);
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
    if (!counted_) {
        if (at_start && !low_ && frames_ == open_frames_) {
            // The whole file was read: number it from 0, as a count on open would.
            if (auto c = reached_start(line); !c) {
                return c.error();
            }
        } else if (!region.empty()) {
            oldest.pos = frames_ - region.size() - warm.size();
            note_low(oldest);
        }
    }
    TurnScan scan;
    for (auto it = warm.rbegin(); it != warm.rend(); ++it) {
        scan.opens_turn(**it);
    }
    for (auto& h : region) {
        h.opens = scan.opens_turn(*h.frame);
    }
    if (!scan_) {
        scan_ = scan;
    }
    std::uint64_t first = frames_ - region.size();
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
    max_turns = std::clamp<std::size_t>(max_turns, 1, SUBSCRIBE_TURNS);
    before = std::min(before, frames_);
    if (before == 0) {
        return Page{};
    }
    const Checkpoint anchor = anchor_at_or_after(before);
    detail::BackwardLines r(fd_, anchor.offset, open_tail_ && anchor.offset == end_);
    std::uint64_t line = anchor.line;
    std::uint64_t pos = anchor.pos;
    HeldFrames region;          // frames before `before`, oldest first
    std::size_t warm = 0;       // the oldest `warm` frames of region only warm the scan up
    std::uint64_t bytes = 0;    // wire bytes of region past the warm-up
    std::size_t candidates = 0; // frames past the warm-up that may open a turn
    std::size_t target = max_turns;
    bool at_start = false;
    std::deque<Checkpoint> where; // not counted yet: where each frame of region is
    for (;;) {
        // Read back until enough candidate openings (or bytes), then a warm-up.
        while (warm < TURN_SCAN_WARMUP) {
            auto l = r.prev();
            if (!l) {
                at_start = true;
                break;
            }
            auto f = parse_line(l->text, --line);
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
            if (!counted_) {
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
    if (!counted_ && page.cursor) {
        note_low(where.at(*page.cursor - region_first)); // the next page reads back from here
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

} // namespace sluice
