// RelayQueue: the relay's byte policy (sans-I/O, single-threaded).
#include <sluice/core/assert.hpp>
#include <sluice/core/relay_queue.hpp>
#include <sluice/core/utf8.hpp>

#include <algorithm>
#include <utility>

namespace sluice {

namespace {

// Same class for merging: same alternative, and the same tool_id for tool deltas.
bool same_class(const StreamEvent& a, const StreamEvent& b) noexcept {
    if (a.index() != b.index()) {
        return false;
    }
    if (const auto* x = std::get_if<llm::ToolUseDelta>(&a)) {
        return x->tool_id == std::get<llm::ToolUseDelta>(b).tool_id;
    }
    if (const auto* x = std::get_if<llm::ToolResultDelta>(&a)) {
        return x->tool_id == std::get<llm::ToolResultDelta>(b).tool_id;
    }
    return true;
}

// A preview of the same variant (and tool_id) as `like`, carrying `payload`.
StreamEvent with_payload(const StreamEvent& like, std::string payload) {
    if (const auto* e = std::get_if<llm::ToolUseDelta>(&like)) {
        return llm::ToolUseDelta{e->tool_id, std::move(payload)};
    }
    if (const auto* e = std::get_if<llm::ToolResultDelta>(&like)) {
        return llm::ToolResultDelta{e->tool_id, std::move(payload)};
    }
    if (std::holds_alternative<llm::Thinking>(like)) {
        return llm::Thinking{std::move(payload)};
    }
    return llm::Text{std::move(payload)};
}

// Dead prefix of the oldest preview worth erasing: amortized O(1) per byte.
constexpr std::size_t COMPACT_MIN_SKIP = 4096;
// Removed previews at a block's front worth erasing from its vector.
constexpr std::size_t COMPACT_MIN_HEAD = 64;

} // namespace

RelayQueue::RelayQueue(RelayLimits limits) noexcept
    : limits_(limits) {
    SLUICE_INVARIANT(limits_.forward_chunk > 0, "a zero forward chunk could never forward");
}

void RelayQueue::drop_bytes(std::uint64_t n) noexcept {
    counters_.dropped += n;
    unreported_dropped_ += n;
}

std::uint64_t RelayQueue::take_unreported_dropped() noexcept {
    return std::exchange(unreported_dropped_, 0);
}

void RelayQueue::note_retained_added(std::size_t n) noexcept {
    counters_.retained += n;
    counters_.peak_retained = std::max(counters_.peak_retained, counters_.retained);
}

RelayQueue::Block* RelayQueue::oldest_preview_block() noexcept {
    oldest_hint_ = std::min(oldest_hint_, blocks_.size());
    while (oldest_hint_ < blocks_.size() && !blocks_[oldest_hint_].has_previews()) {
        ++oldest_hint_;
    }
    return oldest_hint_ < blocks_.size() ? &blocks_[oldest_hint_] : nullptr;
}

void RelayQueue::remove_head_preview(Block& b) {
    b.previews[b.head] = llm::Text{}; // free the payload now
    ++b.head;
    --events_;
    head_skip_ = 0;
    if (b.head == b.previews.size()) {
        b.previews.clear();
        b.head = 0;
    } else if (b.head >= COMPACT_MIN_HEAD && b.head * 2 >= b.previews.size()) {
        b.previews.erase(
            b.previews.begin(), b.previews.begin() + static_cast<std::ptrdiff_t>(b.head));
        b.head = 0;
    }
}

void RelayQueue::maybe_compact_head(std::string& payload) noexcept {
    if (head_skip_ >= COMPACT_MIN_SKIP && head_skip_ * 2 >= payload.size()) {
        payload.erase(0, head_skip_);
        head_skip_ = 0;
    }
}

void RelayQueue::make_room(std::size_t incoming) {
    if (counters_.retained + incoming <= limits_.retained_budget) {
        return;
    }
    std::uint64_t need = counters_.retained + incoming - limits_.retained_budget;
    while (need > 0) {
        Block* b = oldest_preview_block();
        SLUICE_INVARIANT(b != nullptr, "retained bytes without a retained preview");
        std::string& text = *preview_payload_mut(b->previews[b->head]);
        const std::size_t live = text.size() - head_skip_;
        std::size_t cut = live;
        if (live > need) {
            cut =
                utf8::ceil_boundary(text, head_skip_ + static_cast<std::size_t>(need)) - head_skip_;
        }
        drop_bytes(cut);
        counters_.retained -= cut;
        need = cut >= need ? 0 : need - cut;
        if (cut >= live) {
            remove_head_preview(*b);
        } else {
            head_skip_ += cut;
            maybe_compact_head(text);
        }
    }
}

bool RelayQueue::try_merge(StreamEvent& ev, std::size_t n) {
    if (counters_.retained <= limits_.coalesce_threshold || blocks_.empty()) {
        return false;
    }
    Block& tail = blocks_.back();
    if (tail.semantic || !tail.has_previews() || !same_class(tail.previews.back(), ev)) {
        return false;
    }
    std::string& merged = *preview_payload_mut(tail.previews.back());
    // A merged preview grows to one forwarded chunk, then the next one starts: forwarding it
    // moves it whole (no split, no copy of its rest), and a slow consumer's backlog is a few
    // chunk-sized events rather than one string copied as it grows and again as it is cut.
    if (merged.size() + n > limits_.forward_chunk) {
        return false;
    }
    merged.append(*preview_payload_mut(ev));
    note_retained_added(n);
    return true;
}

void RelayQueue::push(StreamEvent ev) {
    std::string* payload = preview_payload_mut(ev);
    if (payload == nullptr) {
        if (blocks_.empty() || blocks_.back().semantic) {
            blocks_.emplace_back();
        }
        blocks_.back().semantic = std::move(ev);
        ++events_;
        return;
    }
    std::size_t n = payload->size();
    counters_.produced += n;
    if (n > limits_.retained_budget) {
        // Only the newest budget bytes can survive; cut the rest before making room.
        const std::size_t cut = utf8::ceil_boundary(*payload, n - limits_.retained_budget);
        payload->erase(0, cut);
        drop_bytes(cut);
        n -= cut;
    }
    if (n == 0) {
        return; // an empty preview carries nothing
    }
    make_room(n);
    if (try_merge(ev, n)) {
        return;
    }
    if (blocks_.empty() || blocks_.back().semantic) {
        blocks_.emplace_back();
    }
    blocks_.back().previews.push_back(std::move(ev));
    ++events_;
    note_retained_added(n);
}

std::optional<StreamEvent> RelayQueue::pop() {
    while (!blocks_.empty()) {
        Block& b = blocks_.front();
        if (b.has_previews()) {
            StreamEvent& front = b.previews[b.head];
            std::string& text = *preview_payload_mut(front);
            const std::size_t live = text.size() - head_skip_;
            if (live > limits_.forward_chunk) {
                std::size_t end = utf8::floor_boundary(text, head_skip_ + limits_.forward_chunk);
                if (end <= head_skip_) { // a character wider than the chunk: send it whole
                    end = utf8::ceil_boundary(text, head_skip_ + 1);
                }
                const std::size_t cut = end - head_skip_;
                StreamEvent out = with_payload(front, text.substr(head_skip_, cut));
                head_skip_ = end;
                counters_.forwarded += cut;
                counters_.retained -= cut;
                maybe_compact_head(text);
                return out;
            }
            if (head_skip_ > 0) {
                text.erase(0, head_skip_);
            }
            StreamEvent out = std::move(front);
            counters_.forwarded += live;
            counters_.retained -= live;
            remove_head_preview(b);
            return out;
        }
        if (b.semantic) {
            StreamEvent out = std::move(*b.semantic);
            blocks_.pop_front();
            oldest_hint_ = oldest_hint_ > 0 ? oldest_hint_ - 1 : 0;
            --events_;
            return out;
        }
        // The open tail block, emptied by drops.
        blocks_.pop_front();
        oldest_hint_ = oldest_hint_ > 0 ? oldest_hint_ - 1 : 0;
    }
    return std::nullopt;
}

void RelayQueue::discard_all(bool report) noexcept {
    if (report) {
        drop_bytes(counters_.retained);
    } else {
        counters_.dropped += counters_.retained;
    }
    counters_.retained = 0;
    blocks_.clear();
    oldest_hint_ = 0;
    events_ = 0;
    head_skip_ = 0;
}

} // namespace sluice
