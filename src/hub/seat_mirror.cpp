// Seat, scale-out: a mirror of a seat another node owns — its window fed from the owner's stream.
#include <sluice/core/assert.hpp>
#include <sluice/hub/seat.hpp>

namespace sluice::hub {

namespace net = boost::asio;

std::shared_ptr<Seat>
Seat::open_mirror(net::io_context& io, SeatSpec spec, SeatOptions opt, std::string owner) {
    SLUICE_INVARIANT(!owner.empty(), "a mirror names its owner node");
    opt.dir.clear(); // nothing of a mirror is on this node's disk
    std::shared_ptr<Seat> seat(new Seat(io, std::move(spec), std::move(opt)));
    seat->mirror_ = true;
    seat->mirror_owner(std::move(owner));
    seat->update_summary();
    return seat;
}

bool Seat::running_now() const noexcept {
    if (!mirror()) {
        return turns_.cancel.has_value();
    }
    return mirror_head_
           && (mirror_head_->state == SeatState::running || mirror_head_->state == SeatState::queued
               || mirror_head_->state == SeatState::waiting);
}

std::uint64_t Seat::turn_now() const noexcept {
    if (!mirror()) {
        return turns_.cancel ? turns_.running : spec_.turns;
    }
    return mirror_head_ ? mirror_head_->turns : spec_.turns;
}

void Seat::mirror_reset(std::string epoch, std::uint64_t first, std::vector<MirrorFrame> frames) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (closed_ || mirror_unfollowed_) {
        return; // unfollowed: a read still on its way is not applied
    }
    const bool new_epoch = epoch != spec_.epoch;
    spec_.epoch = std::move(epoch);
    window_ = Window(opt_.budget, first);
    for (auto& f : frames) {
        window_.append(std::move(f.frame), f.opens);
    }
    connected_cache_.reset();
    connected_page_ = {};
    history_page_ = {};
    partial_.clear();
    preview_pos_ = ~std::uint64_t{0}; // what arrived before the reset counts for nothing
    if (!mirror_ready_) {
        mirror_ready_ = true;
        for (auto& [sub, last] : mirror_waiting_) {
            std::optional<std::string_view> id;
            if (last) {
                id = *last;
            }
            sub->start(window_, spec_.epoch, id); // resumed (recovered) when still in the window
        }
        mirror_waiting_.clear();
    } else if (new_epoch) {
        for (const auto& sub : subscribers_) {
            sub->start(window_, spec_.epoch, std::nullopt); // connected, recovered:false
        }
    }
    // Same epoch (a hole filled from the stream): viewers continue by cursor; one behind the
    // new front is let go and resumes by Last-Event-ID, as on the owner.
    wake_all();
    update_summary();
}

bool Seat::mirror_unfollow() {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!mirror() || !subscribers_.empty()) {
        return false;
    }
    mirror_ready_ = false;
    mirror_asked_ = false;
    mirror_unfollowed_ = true;
    window_ = Window(opt_.budget, window_.end()); // its frames' memory goes
    connected_cache_.reset();
    connected_page_ = {};
    history_page_ = {};
    partial_.clear();
    update_summary();
    return true;
}

bool Seat::mirror_append(
    std::string_view epoch, std::uint64_t first, std::vector<MirrorFrame> frames) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (mirror_unfollowed_) {
        return true; // nothing to read again: its next viewer asks for it
    }
    if (!mirror_ready_ || epoch != spec_.epoch || first > window_.end()) {
        return false;
    }
    const auto skip = window_.end() - first; // held already: a duplicate
    if (skip >= frames.size()) {
        return true;
    }
    for (std::size_t i = skip; i < frames.size(); ++i) {
        window_.append(std::move(frames[i].frame), frames[i].opens);
    }
    for (const auto& sub : subscribers_) {
        sub->frames_published(); // previews queued before these frames are superseded
    }
    partial_.clear(); // the frames carry its content
    last_activity_ = std::chrono::system_clock::now();
    wake_all();
    update_summary();
    return true;
}

// By value as the owner's push_turn_state hands it on: each viewer keeps its own copy.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void Seat::mirror_turn_state(std::uint64_t before, std::string data) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!mirror_ready_) {
        return; // the reset's connected carries the state
    }
    if (data.find(R"("state":"started")") == std::string::npos) {
        partial_.clear(); // the turn is over: nothing of it is open any more
    }
    for (const auto& sub : subscribers_) {
        sub->push_turn_state(before, data);
    }
    wake_all();
}

void Seat::mirror_preview(
    std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!mirror_ready_ || epoch != spec_.epoch || pos != window_.end()) {
        return; // superseded by frames held (older), or ahead of frames still to come (newer)
    }
    if (preview_pos_ != pos) {
        preview_pos_ = pos;
        preview_pos_bytes_ = 0;
    }
    if (offset > preview_pos_bytes_) {
        // Published at this position but never here (pub/sub lost them, or this node joined
        // mid-message): every viewer's loss, marked in-band; the partial says so too.
        const auto lost = offset - preview_pos_bytes_;
        for (const auto& sub : subscribers_) {
            sub->note_lost(lost);
        }
        partial_.note_missing(lost);
    }
    preview_pos_bytes_ = offset + preview_bytes(ev).value_or(0);
    publish_preview(ev);
    wake_all();
}

void Seat::mirror_head(SeatSummary owner, std::string gone) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    mirror_head_ = std::make_unique<SeatSummary>(std::move(owner));
    mirror_gone_ = std::move(gone);
    connected_cache_.reset(); // its head (running, turn) may have changed
    update_summary();
}

} // namespace sluice::hub
