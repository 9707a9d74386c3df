// Seat: its viewers — attach/detach, stepping through the subscriber, the shared connected page,
// history pages and the summary.
#include "seat_store.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/wire.hpp>

#include <algorithm>

namespace sluice::hub {

void Seat::attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (foreign_pending(sub, last)) {
        return; // a foreign file opens first (on the writer); it starts the subscriber then
    }
    std::optional<std::string_view> id;
    if (last) {
        id = *last;
    }
    if (mirror() && !mirror_ready_) {
        // Nothing is known yet: it starts at the mirror's first reset (seat_mirror.cpp).
        mirror_waiting_.emplace_back(sub, std::move(last));
        subscribers_.push_back(sub);
        update_summary();
        if (!std::exchange(mirror_asked_, true) && opt_.broker) {
            mirror_unfollowed_ = false;
            opt_.broker->mirror_wanted(shared_from_this());
        }
        return;
    }
    sub->start(window_, spec_.epoch, id);
    subscribers_.push_back(sub);
    update_summary();
}

void Seat::detach(const std::shared_ptr<Subscriber>& sub) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    std::erase(subscribers_, sub);
    std::erase_if(mirror_waiting_, [&](const auto& w) { return w.first == sub; });
    if (foreign_) {
        std::erase_if(foreign_->waiting, [&sub](const auto& w) { return w.first == sub; });
    }
    preview_dropped_ += sub->gap_bytes() + sub->take_unreported_dropped();
    resyncs_ += sub->resyncs();
    if (sub->cancels_on_disconnect() && turns_.cancel) {
        cancel("cancelled: the caller disconnected"); // it was the turn's caller: nobody waits for
                                                      // the turn any more
    }
    update_summary();
}

SeatView Seat::view() {
    SeatView v;
    v.window = &window_;
    v.seat = spec_.id;
    v.epoch = spec_.epoch;
    v.running = running_now();
    v.turn = turn_now();
    v.permissions = permissions_json_;
    v.connected = [this] { return connected_data(); };
    v.partial = [this] { return partial_data(); };
    return v;
}

void Seat::collect(Subscriber& sub, std::vector<OutEvent>& out) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (mirror() && !mirror_ready_) {
        return; // a mirror's viewers wait for its first reset
    }
    if (foreign_ && !foreign_->opened) {
        return; // not started yet: it waits for the file to open
    }
    const auto gaps_before = sub.gap_bytes();
    sub.collect(view(), out);
    if (sub.gap_bytes() != gaps_before) {
        update_summary(); // the loss just reported shows in the seat's figures at once
    }
}

namespace {

// Whether a page built from the window at (first, bytes) may still serve: the front has not
// moved (every frame it holds is still held, the seq numbering is the same), and either a
// subscriber is still being sent it (`in_use`) or the window has grown by at most a quarter of
// the page since. A page in use is reused however the window grew — the joiner replays the
// frames after it from the window, shared — because a new one would live beside it: with joins
// spread over a burst, one page per quarter of growth was up to five windows' worth of pages at
// once (bench/burst_join.py). A page nobody holds is rebuilt after a quarter of growth, so the
// replay stays short when building costs no second page (O(page) per quarter page appended).
bool page_still_serves(
    const Window& w, std::uint64_t first, std::uint64_t bytes, std::size_t page_size, bool in_use) {
    constexpr std::uint64_t MIN_GROWTH = 64 * 1024; // small windows: not one page per frame
    const auto growth = w.bytes() >= bytes ? w.bytes() - bytes : ~std::uint64_t{0};
    return w.first() == first
           && (in_use || growth <= std::max<std::uint64_t>(MIN_GROWTH, page_size / 4));
}

} // namespace

SharedPage Seat::connected_data() {
    // In use: held by a subscriber's batch or write besides this cache (all on this strand).
    if (connected_cache_
        && page_still_serves(
            window_,
            connected_page_.first,
            connected_page_.bytes,
            connected_cache_->size(),
            connected_cache_.use_count() > 1)) {
        return SharedPage{connected_cache_, connected_page_.end};
    }
    const auto page = window_.page(std::nullopt, SUBSCRIBE_TURNS);
    const auto end = window_.end();
    const wire::SeatHead head{
        spec_.id,
        spec_.epoch,
        static_cast<std::int64_t>(end) - 1,
        running_now(),
        turn_now(),
        permissions_json_};
    connected_cache_ =
        std::make_shared<const std::string>(wire::connected_json(head, page.value_or(Page{}), end));
    connected_page_.first = window_.first();
    connected_page_.end = end;
    connected_page_.bytes = window_.bytes();
    return SharedPage{connected_cache_, end};
}

std::shared_ptr<const std::string> Seat::partial_data() {
    // A mirror has no turn of its own: its partial is what the owner's previews brought since
    // the last frame, cleared by frames and by the turn's end.
    if (!(turns_.cancel || mirror()) || partial_.empty()) {
        partial_cache_.reset();
        return nullptr;
    }
    if (!partial_cache_ || partial_cache_version_ != partial_.version()) {
        partial_cache_ = std::make_shared<const std::string>(",\"partial\":" + partial_.json());
        partial_cache_version_ = partial_.version();
    }
    return partial_cache_;
}

void Seat::wake_all() {
    for (const auto& sub : subscribers_) {
        sub->wake();
    }
}

std::optional<HistoryPage>
Seat::window_history(std::optional<std::uint64_t> before, std::uint64_t at, std::size_t turns) {
    // One page per (request, window version), shared by every client asking for it. The
    // newest page (no `before`) is served as of a slightly older end while the window grows
    // (page_still_serves): still a consistent page, its cursor still right. Never longer
    // because it is in use: nothing replays the frames after a history page.
    auto& c = history_page_;
    if (c.json && c.before == before && c.turns == turns
        && (before
                ? window_.first() == c.first
                : page_still_serves(window_, c.first, c.bytes, c.json->size(), /*in_use=*/false))) {
        return HistoryPage{c.json};
    }
    if (auto page = window_.page(at, turns)) {
        c.json = std::make_shared<const std::string>(wire::page_json(*page));
        c.first = window_.first();
        c.end = window_.end();
        c.bytes = window_.bytes();
        c.before = before;
        c.turns = turns;
        return HistoryPage{c.json};
    }
    return std::nullopt;
}

void Seat::history(
    std::optional<std::uint64_t> before, std::size_t turns, const HistoryDone& done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (foreign_ && !foreign_->opened) {
        foreign_->after_open.emplace_back([self = shared_from_this(), before, turns, done] {
            self->history(before, turns, done);
        });
        foreign_open();
        return;
    }
    turns = std::clamp<std::size_t>(turns, 1, SUBSCRIBE_TURNS);
    const std::uint64_t at = before.value_or(window_.end());
    if (at > window_.end()) {
        done(Failure::of(
            errc::bad_request,
            "'before' is past the newest frame (" + std::to_string(window_.end()) + ")"));
        return;
    }
    if (auto page = window_history(before, at, turns)) {
        done(std::move(*page));
        return;
    }
    if (!store_) {
        done(Failure::of(errc::io_error, "the transcript of this seat cannot be read"));
        return;
    }
    // Below the window floor: read from the transcript (O(page)) on the writer, in order with
    // the appends (see seat_store.hpp).
    auto out = std::make_shared<std::optional<Result<HistoryPage>>>();
    const bool queued = submit_job(
        [store = store_, at, turns, out]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            auto page = store->transcript.page(at, turns);
            if (!page) {
                out->emplace(
                    Failure{page.error(), "cannot read that page: " + page.error().message()});
            } else {
                out->emplace(
                    HistoryPage{std::make_shared<const std::string>(wire::page_json(*page))});
            }
            return {};
        },
        [out, done](boost::system::error_code) {
            done(
                out->has_value() ? std::move(**out)
                                 : Result<HistoryPage>(Failure::of(errc::io_error, "lost")));
        });
    if (!queued) {
        done(Failure::of(errc::overloaded, "the disk queue is full; try again"));
    }
}

Result<std::shared_ptr<const std::string>> Seat::frame_text(std::uint64_t seq) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (foreign_ && !foreign_->opened) {
        foreign_open();
        return Failure::of(errc::overloaded, "the session file is being opened; try again");
    }
    if (seq >= window_.end()) {
        return Failure::of(
            errc::not_found,
            "no frame " + std::to_string(seq) + " yet (" + std::to_string(window_.end())
                + " published)");
    }
    if (frame_text_.second && frame_text_.first == seq) {
        return frame_text_.second;
    }
    if (!store_) {
        return Failure::of(errc::io_error, "the transcript of this seat cannot be read");
    }
    std::lock_guard lock(store_->mu);
    auto span = store_->transcript.frame_span(seq);
    if (!span) {
        return Failure{span.error(), "cannot find that frame: " + span.error().message()};
    }
    auto text = store_->transcript.read_bytes(span->first, span->second);
    if (!text) {
        return Failure{text.error(), "cannot read that frame: " + text.error().message()};
    }
    frame_text_ = {seq, std::make_shared<const std::string>(std::move(*text))};
    return frame_text_.second;
}

void Seat::update_summary() {
    SeatSummary s;
    s.id = spec_.id;
    s.name = spec_.name;
    s.agent = spec_.agent;
    s.epoch = spec_.epoch;
    s.model = spec_.model;
    s.permission_mode = spec_.permission_mode;
    if (!unavailable_.empty()) {
        s.state = SeatState::unavailable;
        s.reason = unavailable_;
    } else if (turns_.cancel) {
        s.state = turns_.queue.empty() ? SeatState::running : SeatState::queued;
        if (!permissions_pending_.empty() || agent_requires_action_) {
            s.state = SeatState::waiting;
        }
    }
    s.pending_permissions = permissions_pending_.size();
    if (!disk_.degraded.empty() || !read_only_.empty()) {
        s.degraded = true;
        if (s.reason.empty()) {
            s.reason = !disk_.degraded.empty() ? disk_.degraded : read_only_;
        }
        if (s.state != SeatState::unavailable && !turns_.cancel) {
            s.state = SeatState::degraded; // a running turn shows running until it ends
        }
    }
    s.write_errors = disk_.write_errors;
    s.warnings = disk_.warnings;
    s.turns = spec_.turns;
    s.frames = window_.end();
    s.window_first = window_.first();
    s.window_frames = window_.size();
    s.window_bytes = window_.bytes();
    std::uint64_t dropped = preview_dropped_;
    std::uint64_t resyncs = resyncs_;
    for (const auto& sub : subscribers_) {
        dropped += sub->gap_bytes();
        resyncs += sub->resyncs();
    }
    s.preview_dropped_bytes = dropped;
    s.resyncs = resyncs;
    s.subscribers = subscribers_.size();
    s.queued = turns_.queue.size();
    s.last_activity = last_activity_;
    if (mirror_head_) {
        // A mirror shows its owner's figures, with this node's window and viewers.
        s.name = mirror_head_->name;
        s.state = mirror_head_->state;
        s.turns = mirror_head_->turns;
        s.degraded = mirror_head_->degraded;
        s.reason = mirror_head_->reason;
        s.last_activity = mirror_head_->last_activity;
        if (!mirror_ready_) {
            s.frames = mirror_head_->frames; // not followed yet: the owner's count
        }
    }
    if (!mirror_gone_.empty()) {
        s.state = SeatState::unavailable;
        s.reason = mirror_gone_;
    }
    if (foreign_) {
        foreign_summary(s);
    }
    std::lock_guard lock(summary_mu_);
    summary_ = std::move(s);
}

SeatSummary Seat::summary() const {
    std::lock_guard lock(summary_mu_);
    return summary_;
}

} // namespace sluice::hub
