// Window: the cut, the live copy, and pages from the window.
#include <sluice/conversation/window.hpp>
#include <sluice/core/assert.hpp>

#include <algorithm>

namespace sluice {

std::size_t cut_point(const HeldFrames& held, const Budget& budget) {
    const std::size_t n = held.size();
    if (n == 0) {
        return 0;
    }
    // tail[i] = wire bytes of held[i..n)
    std::vector<std::uint64_t> tail(n + 1, 0);
    for (std::size_t i = n; i-- > 0;) {
        tail[i] = tail[i + 1] + held[i].frame->wire_bytes();
    }
    auto fits = [&](std::size_t i, std::uint64_t frames, std::uint64_t bytes) {
        return n - i <= frames && tail[i] <= bytes;
    };
    // 1. line: the first frame from which the tail fits both caps; the newest frame stays.
    std::size_t line = n > budget.cap ? n - budget.cap : 0;
    while (line < n - 1 && tail[line] > budget.cap_bytes) {
        ++line;
    }
    // 2. the first turn opening at or after the line.
    for (std::size_t j = line; j < n; ++j) {
        if (held[j].opens) {
            return j;
        }
    }
    // 3. the newest opening before the line, if one long newest turn can ride the slack.
    for (std::size_t j = line; j-- > 0;) {
        if (held[j].opens) {
            if (fits(j, budget.cap + budget.slack, budget.cap_bytes + budget.slack_bytes)) {
                return j;
            }
            break;
        }
    }
    // 4. inside the turn (or a head the scan cannot name): keep the newest frames.
    return line;
}

std::uint64_t shed_thinking(const HeldFrames& held, std::size_t cut) {
    std::size_t newest = 0; // the newest turn's first frame (0: opened below the floor)
    for (std::size_t j = held.size(); j-- > 0;) {
        if (held[j].opens) {
            newest = j;
            break;
        }
    }
    std::uint64_t sum = 0;
    for (std::size_t j = newest; j < cut && j < held.size(); ++j) {
        sum += held[j].frame->thinking_delta();
    }
    return sum;
}

Window::Window(Budget budget, std::uint64_t first) noexcept
    : budget_(budget)
    , first_(first) {
}

Window Window::restore(Budget budget, std::uint64_t first, HeldFrames held, TurnScan scan) {
    Window w(budget, first);
    for (const auto& h : held) {
        SLUICE_INVARIANT(h.frame != nullptr, "a restored window holds frames");
        w.bytes_ += h.frame->wire_bytes();
    }
    w.held_ = std::move(held);
    w.scan_ = std::move(scan);
    return w;
}

Shed Window::append(FramePtr f) {
    const bool opens = scan_.opens_turn(*f);
    return append(std::move(f), opens);
}

Shed Window::append(FramePtr f, bool opens) {
    SLUICE_INVARIANT(f != nullptr, "a window holds frames");
    bytes_ += f->wire_bytes();
    held_.push_back({std::move(f), opens});
    return cut_if_past_ceiling();
}

Shed Window::cut_if_past_ceiling() {
    if (!budget_.past_ceiling(held_.size(), bytes_)) {
        return {};
    }
    const std::size_t cut = cut_point(held_, budget_);
    Shed shed{cut, shed_thinking(held_, cut)};
    for (std::size_t i = 0; i < cut; ++i) {
        bytes_ -= held_.front().frame->wire_bytes();
        held_.pop_front();
    }
    first_ += cut;
    return shed;
}

FramePtr Window::at(std::uint64_t pos) const noexcept {
    if (pos < first_ || pos >= end()) {
        return nullptr;
    }
    return held_[static_cast<std::size_t>(pos - first_)].frame;
}

bool Window::opens_turn(std::uint64_t pos) const noexcept {
    return pos >= first_ && pos < end() && held_[static_cast<std::size_t>(pos - first_)].opens;
}

std::vector<FramePtr> Window::frames_from(std::uint64_t pos, std::size_t max) const {
    std::vector<FramePtr> out;
    for (std::uint64_t p = std::max(pos, first_); p < end() && out.size() < max; ++p) {
        out.push_back(held_[static_cast<std::size_t>(p - first_)].frame);
    }
    return out;
}

std::vector<std::uint64_t> Window::openings() const {
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < held_.size(); ++i) {
        if (held_[i].opens) {
            out.push_back(first_ + i);
        }
    }
    return out;
}

std::optional<Page> Window::page(std::optional<std::uint64_t> before, std::size_t max_turns) const {
    const std::uint64_t stop = std::min(before.value_or(end()), end());
    if (stop <= first_) {
        if (first_ == 0) {
            return Page{}; // nothing older exists at all
        }
        return std::nullopt;
    }
    Page page;
    std::uint64_t hi = stop; // groups are [lo, hi)
    std::uint64_t lo = stop;
    while (lo > first_ && page.turns.size() < max_turns) {
        lo = hi - 1;
        while (lo > first_ && !opens_turn(lo)) {
            --lo;
        }
        PageTurn t{lo, frames_from(lo, static_cast<std::size_t>(hi - lo))};
        page.turns.push_back(std::move(t));
        hi = lo;
    }
    std::reverse(page.turns.begin(), page.turns.end());
    if (lo > 0) {
        page.cursor = lo;
    }
    return page;
}

} // namespace sluice
