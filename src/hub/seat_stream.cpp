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
    std::optional<std::string_view> id;
    if (last) {
        id = *last;
    }
    sub->start(window_, spec_.epoch, id);
    subscribers_.push_back(sub);
    update_summary();
}

void Seat::detach(const std::shared_ptr<Subscriber>& sub) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    std::erase(subscribers_, sub);
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
    v.running = turns_.cancel.has_value();
    v.turn = turns_.cancel ? turns_.running : spec_.turns;
    v.permissions = permissions_json_;
    v.connected = [this] { return connected_data(); };
    v.partial = [this] { return partial_data(); };
    return v;
}

void Seat::collect(Subscriber& sub, std::vector<OutEvent>& out) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    const auto gaps_before = sub.gap_bytes();
    sub.collect(view(), out);
    if (sub.gap_bytes() != gaps_before) {
        update_summary(); // the loss just reported shows in the seat's figures at once
    }
}

std::shared_ptr<const std::string> Seat::connected_data() {
    if (connected_cache_ && connected_cache_end_ == window_.end()
        && connected_cache_first_ == window_.first()) {
        return connected_cache_;
    }
    const auto page = window_.page(std::nullopt, SUBSCRIBE_TURNS);
    const auto end = window_.end();
    const wire::SeatHead head{
        spec_.id,
        spec_.epoch,
        static_cast<std::int64_t>(end) - 1,
        turns_.cancel.has_value(),
        turns_.cancel ? turns_.running : spec_.turns,
        permissions_json_};
    connected_cache_ =
        std::make_shared<const std::string>(wire::connected_json(head, page.value_or(Page{}), end));
    connected_cache_end_ = end;
    connected_cache_first_ = window_.first();
    return connected_cache_;
}

std::shared_ptr<const std::string> Seat::partial_data() {
    if (!turns_.cancel || partial_.empty()) {
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

void Seat::history(std::optional<std::uint64_t> before, std::size_t turns, HistoryDone done) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    turns = std::clamp<std::size_t>(turns, 1, SUBSCRIBE_TURNS);
    const std::uint64_t at = before.value_or(window_.end());
    if (at > window_.end()) {
        done(Failure::of(
            errc::bad_request,
            "'before' is past the newest frame (" + std::to_string(window_.end()) + ")"));
        return;
    }
    if (auto page = window_.page(at, turns)) {
        done(HistoryPage{wire::page_json(*page)});
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
                out->emplace(HistoryPage{wire::page_json(*page)});
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

Result<HistoryPage> Seat::history(std::optional<std::uint64_t> before, std::size_t turns) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    turns = std::clamp<std::size_t>(turns, 1, SUBSCRIBE_TURNS);
    const std::uint64_t at = before.value_or(window_.end());
    if (at > window_.end()) {
        return Failure::of(
            errc::bad_request,
            "'before' is past the newest frame (" + std::to_string(window_.end()) + ")");
    }
    if (auto page = window_.page(at, turns)) {
        return HistoryPage{wire::page_json(*page)};
    }
    if (!store_) {
        return Failure::of(errc::io_error, "the transcript of this seat cannot be read");
    }
    std::lock_guard lock(store_->mu);
    auto page = store_->transcript.page(at, turns);
    if (!page) {
        return Failure{page.error(), "cannot read that page: " + page.error().message()};
    }
    return HistoryPage{wire::page_json(*page)};
}

void Seat::update_summary() {
    SeatSummary s;
    s.id = spec_.id;
    s.name = spec_.name;
    s.agent = spec_.agent;
    s.epoch = spec_.epoch;
    if (!unavailable_.empty()) {
        s.state = SeatState::unavailable;
        s.reason = unavailable_;
    } else if (turns_.cancel) {
        s.state = turns_.queue.empty() ? SeatState::running : SeatState::queued;
        if (!permissions_pending_.empty()) {
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
    std::lock_guard lock(summary_mu_);
    summary_ = std::move(s);
}

SeatSummary Seat::summary() const {
    std::lock_guard lock(summary_mu_);
    return summary_;
}

} // namespace sluice::hub
