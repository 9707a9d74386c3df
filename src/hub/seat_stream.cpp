// Seat: its viewers — attach/detach, stepping through the subscriber, the shared connected page,
// history pages and the summary.
#include "seat_store.hpp" // a foreign seat waits for its file to open

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/wire.hpp>

#include <algorithm>
#include <utility>

namespace sluice::hub {

void Seat::attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    feed_.attach(sub, std::move(last)); // waits in the feed while it is not ready
    if (foreign_ && !foreign_->opened) {
        foreign_open(); // a foreign file opens first (on the writer); its viewers start then
    } else if (mirror() && !feed_.ready() && !std::exchange(mirror_asked_, true) && opt_.broker) {
        // Nothing is known yet: its viewers start at the mirror's first reset.
        mirror_unfollowed_ = false;
        opt_.broker->mirror_wanted(shared_from_this());
    }
    update_summary();
}

void Seat::detach(const std::shared_ptr<Subscriber>& sub) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    feed_.detach(sub);
    if (sub->cancels_on_disconnect() && turns_.cancel) {
        cancel("cancelled: the caller disconnected"); // it was the turn's caller: nobody waits for
                                                      // the turn any more
    }
    update_summary();
}

FeedHead Seat::head() const noexcept {
    // A mirror has no turn of its own: its partial is what the owner's previews brought since
    // the last frame, cleared by frames and by the turn's end.
    return FeedHead{
        .running = running_now(),
        .turn = turn_now(),
        .permissions = permissions_json_,
        .partial_open = turns_.cancel.has_value() || mirror()};
}

void Seat::collect(Subscriber& sub, std::vector<OutEvent>& out) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (feed_.collect(sub, out, head())) {
        update_summary(); // the loss just reported shows in the seat's figures at once
    }
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
    const std::uint64_t at = before.value_or(feed_.window().end());
    if (at > feed_.window().end()) {
        done(Failure::of(
            errc::bad_request,
            "'before' is past the newest frame (" + std::to_string(feed_.window().end()) + ")"));
        return;
    }
    if (auto page = feed_.history(before, at, turns)) {
        done(std::move(*page));
        return;
    }
    // Below the window floor: read from the transcript (O(page)) on the writer, in order with
    // the appends.
    const bool queued =
        journal_->read_page(at, turns, [done](Result<std::shared_ptr<const std::string>> page) {
            if (!page) {
                done(std::move(page.error()));
            } else {
                done(HistoryPage{std::move(*page)});
            }
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
    if (seq >= feed_.window().end()) {
        return Failure::of(
            errc::not_found,
            "no frame " + std::to_string(seq) + " yet (" + std::to_string(feed_.window().end())
                + " published)");
    }
    return journal_->frame_text(seq);
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
    if (!journal_->degraded().empty() || !journal_->read_only().empty()) {
        s.degraded = true;
        if (s.reason.empty()) {
            s.reason = !journal_->degraded().empty() ? journal_->degraded() : journal_->read_only();
        }
        if (s.state != SeatState::unavailable && !turns_.cancel) {
            s.state = SeatState::degraded; // a running turn shows running until it ends
        }
    }
    s.write_errors = journal_->write_errors();
    s.warnings = journal_->warnings();
    s.turns = spec_.turns;
    s.frames = feed_.window().end();
    s.window_first = feed_.window().first();
    s.window_frames = feed_.window().size();
    s.window_bytes = feed_.window().bytes();
    s.preview_dropped_bytes = feed_.preview_dropped_bytes();
    s.resyncs = feed_.resyncs();
    s.subscribers = feed_.subscribers();
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
        if (!feed_.ready()) {
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
