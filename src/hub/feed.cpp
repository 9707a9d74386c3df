// Feed: the window, the viewers, the shared pages and the preview loss accounting of one seat.
#include <sluice/hub/feed.hpp>
#include <sluice/hub/wire.hpp>

#include <algorithm>

namespace sluice::hub {

Feed::Feed(std::string seat, std::string epoch, Budget budget)
    : seat_(std::move(seat))
    , epoch_(std::move(epoch))
    , budget_(budget)
    , window_(budget) {
}

void Feed::published() {
    for (const auto& sub : subscribers_) {
        sub->frames_published(); // previews queued before these frames are superseded
    }
    partial_.clear(); // so is the partial message: the frames carry its content
    stamps_.at(stamped_ % stamps_.size()) = {window_.end(), std::chrono::steady_clock::now()};
    ++stamped_;
}

std::optional<std::chrono::steady_clock::time_point>
Feed::published_at(std::uint64_t pos) const noexcept {
    // Oldest to newest: the first publish whose end passed pos published it, provided the
    // publish before it is still held (or none was ever dropped) so pos was not published
    // earlier.
    const std::uint64_t held = std::min<std::uint64_t>(stamped_, stamps_.size());
    for (std::uint64_t i = stamped_ - held; i < stamped_; ++i) {
        const auto& s = stamps_.at(i % stamps_.size());
        if (pos < s.end) {
            if (i == stamped_ - held && stamped_ > held) {
                return std::nullopt; // the stamp before it was dropped
            }
            return s.at;
        }
    }
    return std::nullopt;
}

void Feed::clear_pages() {
    connected_ = {};
    history_ = {};
    partial_.clear();
    partial_cache_.reset();
    preview_pos_ = ~std::uint64_t{0}; // positions start again: no preview bytes counted at any
    stamped_ = 0;                     // and no publish times
}

void Feed::replace(std::string epoch, Window window, bool restart) {
    epoch_ = std::move(epoch);
    window_ = std::move(window);
    clear_pages();
    const bool was_ready = std::exchange(ready_, true);
    if (was_ready && restart) {
        for (const auto& sub : subscribers_) {
            sub->frames_published(); // previews of the old window are gone with it
            sub->start(window_, epoch_, std::nullopt);
        }
    } else if (restart) {
        // Not ready: only waiting viewers are attached, and they start below.
        for (const auto& sub : subscribers_) {
            sub->frames_published();
        }
    }
    start_waiting();
    wake_all();
}

void Feed::start_waiting() {
    for (auto& [sub, last] : waiting_) {
        std::optional<std::string_view> id;
        if (last) {
            id = *last;
        }
        sub->start(window_, epoch_, id); // resumed when still in the window
    }
    waiting_.clear();
}

void Feed::unready() {
    window_ = Window(budget_, window_.end()); // its frames' memory goes
    clear_pages();
    ready_ = false;
}

void Feed::attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last) {
    subscribers_.push_back(sub);
    if (!ready_) {
        waiting_.emplace_back(sub, std::move(last));
        return;
    }
    std::optional<std::string_view> id;
    if (last) {
        id = *last;
    }
    sub->start(window_, epoch_, id);
}

void Feed::detach(const std::shared_ptr<Subscriber>& sub) {
    const auto before = subscribers_.size();
    std::erase(subscribers_, sub);
    std::erase_if(waiting_, [&](const auto& w) { return w.first == sub; });
    if (subscribers_.size() != before) {
        gone_dropped_ += sub->gap_bytes() + sub->take_unreported_dropped();
        gone_resyncs_ += sub->resyncs();
    }
}

bool Feed::collect(Subscriber& sub, std::vector<OutEvent>& out, const FeedHead& head) {
    if (!ready_) {
        return false; // its viewers wait for the frames (replace)
    }
    SeatView v;
    v.window = &window_;
    v.seat = seat_;
    v.epoch = epoch_;
    v.running = head.running;
    v.waiting = head.waiting;
    v.turn = head.turn;
    v.permissions = head.permissions;
    v.connected = [this, &head] { return connected(head); };
    v.partial = [this, &head] { return partial(head); };
    const auto gaps_before = sub.gap_bytes();
    sub.collect(v, out);
    return sub.gap_bytes() != gaps_before;
}

void Feed::wake_all() const {
    for (const auto& sub : subscribers_) {
        sub->wake();
    }
}

std::uint64_t Feed::preview_offset() {
    if (preview_pos_ != window_.end()) {
        preview_pos_ = window_.end();
        preview_pos_bytes_ = 0;
    }
    return preview_pos_bytes_;
}

void Feed::preview(const StreamEvent& ev) {
    (void)preview_offset(); // moves the position to the window's end
    preview_pos_bytes_ += preview_bytes(ev).value_or(0);
    partial_.add(ev);
    for (const auto& sub : subscribers_) {
        sub->push_preview(ev);
    }
}

void Feed::preview_at(std::uint64_t offset, const StreamEvent& ev) {
    if (const auto have = preview_offset(); offset > have) {
        // Published at this position but never here (pub/sub lost them, or this node joined
        // mid-message): every viewer's loss, marked in-band; the partial says so too.
        const auto missing = offset - have;
        for (const auto& sub : subscribers_) {
            sub->note_lost(missing);
        }
        partial_.note_missing(missing);
    }
    preview_pos_bytes_ = offset;
    preview(ev);
}

void Feed::lost(std::uint64_t bytes) {
    for (const auto& sub : subscribers_) {
        sub->note_lost(bytes);
    }
    (void)preview_offset();
    preview_pos_bytes_ += bytes; // lost for the other nodes' viewers too
}

void Feed::permission(const std::string& data) {
    for (const auto& sub : subscribers_) {
        sub->push_turn_state(window_.end(), data, wire::OutEvent::Kind::permission);
    }
}

void Feed::turn_state(std::uint64_t before, const std::string& data) {
    for (const auto& sub : subscribers_) {
        sub->push_turn_state(before, data);
    }
}

namespace {

// Whether a `connected` page built from the window at (first, bytes) may still serve a join: the
// front has not moved (every frame it holds is still held, the numbering is the same), and either
// a subscriber is still being sent it (`in_use`) or the window has grown by at most a quarter of
// the page since. The joiner is sent the frames after the page's end from the window, so the
// join is exact either way. A page in use is reused however the window grew — a new one would
// live beside it: with joins spread over a burst, one page per quarter of growth was up to five
// windows' worth of pages at once (bench/burst_join.py). A page nobody holds is rebuilt after a
// quarter of growth, so the replay stays short (O(page) per quarter page appended).
bool connected_still_serves(
    const Window& w, std::uint64_t first, std::uint64_t bytes, std::size_t page_size, bool in_use) {
    constexpr std::uint64_t MIN_GROWTH = 64 * 1024; // small windows: not one page per frame
    const auto growth = w.bytes() >= bytes ? w.bytes() - bytes : ~std::uint64_t{0};
    return w.first() == first
           && (in_use || growth <= std::max<std::uint64_t>(MIN_GROWTH, page_size / 4));
}

} // namespace

SharedPage Feed::connected(const FeedHead& head) {
    auto& c = connected_;
    // In use: held by a subscriber's batch or write besides this cache (all on this strand).
    if (c.json && c.running == head.running && c.waiting == head.waiting && c.turn == head.turn
        && c.permissions == head.permissions
        && connected_still_serves(
            window_, c.first, c.bytes, c.json->size(), c.json.use_count() > 1)) {
        return SharedPage{c.json, c.end};
    }
    const auto page = window_.page(std::nullopt, SUBSCRIBE_TURNS);
    const auto end = window_.end();
    const wire::SeatHead h{
        seat_,
        epoch_,
        static_cast<std::int64_t>(end) - 1,
        head.running,
        head.turn,
        head.permissions,
        head.waiting};
    c.json =
        std::make_shared<const std::string>(wire::connected_json(h, page.value_or(Page{}), end));
    c.first = window_.first();
    c.end = end;
    c.bytes = window_.bytes();
    c.running = head.running;
    c.waiting = head.waiting;
    c.turn = head.turn;
    c.permissions = std::string(head.permissions);
    return SharedPage{c.json, end};
}

std::shared_ptr<const std::string> Feed::partial(const FeedHead& head) {
    if (!head.partial_open || partial_.empty()) {
        partial_cache_.reset();
        return nullptr;
    }
    if (!partial_cache_ || partial_cache_version_ != partial_.version()) {
        partial_cache_ = std::make_shared<const std::string>(",\"partial\":" + partial_.json());
        partial_cache_version_ = partial_.version();
    }
    return partial_cache_;
}

std::optional<HistoryPage>
Feed::history(std::optional<std::uint64_t> before, std::uint64_t at, std::size_t turns) {
    // One page per (request, window), shared by every client asking for it while the window is
    // the same: the same front, and for the newest page the same end (a page with `before` is
    // made of frames below it, which a growing window does not change).
    auto& c = history_;
    if (c.json && c.before == before && c.turns == turns && c.first == window_.first()
        && (before || c.end == window_.end())) {
        return HistoryPage{c.json};
    }
    auto page = window_.page(at, turns);
    if (!page) {
        return std::nullopt;
    }
    c.json = std::make_shared<const std::string>(wire::page_json(*page, at));
    c.first = window_.first();
    c.end = window_.end();
    c.before = before;
    c.turns = turns;
    return HistoryPage{c.json};
}

std::uint64_t Feed::preview_dropped_bytes() const noexcept {
    std::uint64_t n = gone_dropped_;
    for (const auto& sub : subscribers_) {
        n += sub->gap_bytes();
    }
    return n;
}

std::uint64_t Feed::resyncs() const noexcept {
    std::uint64_t n = gone_resyncs_;
    for (const auto& sub : subscribers_) {
        n += sub->resyncs();
    }
    return n;
}

} // namespace sluice::hub
