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
    seat->feed_.unready(); // its viewers wait for its first reset
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
    Window window(opt_.budget, first);
    for (auto& f : frames) {
        window.append(std::move(f.frame), f.opens);
    }
    // Waiting viewers resume by their Last-Event-ID (recovered when still in the window); a new
    // epoch starts the others again with `connected`. Same epoch (a hole filled from the stream):
    // viewers continue by cursor; one behind the new front is let go and resumes by
    // Last-Event-ID, as on the owner.
    feed_.replace(spec_.epoch, std::move(window), /*restart=*/new_epoch);
    update_summary();
}

bool Seat::mirror_unfollow() {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!mirror() || feed_.subscribers() > 0) {
        return false;
    }
    mirror_asked_ = false;
    mirror_unfollowed_ = true;
    feed_.unready();
    update_summary();
    return true;
}

bool Seat::mirror_append(
    std::string_view epoch, std::uint64_t first, std::vector<MirrorFrame> frames) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (mirror_unfollowed_) {
        return true; // nothing to read again: its next viewer asks for it
    }
    const auto end = feed_.window().end();
    if (!feed_.ready() || epoch != spec_.epoch || first > end) {
        return false;
    }
    const auto skip = end - first; // held already: a duplicate
    if (skip >= frames.size()) {
        return true;
    }
    for (std::size_t i = skip; i < frames.size(); ++i) {
        feed_.append(std::move(frames[i].frame), frames[i].opens);
    }
    feed_.published();
    last_activity_ = std::chrono::system_clock::now();
    wake_all();
    update_summary();
    return true;
}

// By value as the owner's push_turn_state hands it on: each viewer keeps its own copy.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void Seat::mirror_turn_state(std::uint64_t before, std::string data) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!feed_.ready()) {
        return; // the reset's connected carries the state
    }
    if (data.find(R"("state":"started")") == std::string::npos) {
        feed_.clear_partial(); // the turn is over: nothing of it is open any more
    }
    feed_.turn_state(before, data);
    wake_all();
}

void Seat::mirror_preview(
    std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    if (!feed_.ready() || epoch != spec_.epoch || pos != feed_.window().end()) {
        return; // superseded by frames held (older), or ahead of frames still to come (newer)
    }
    feed_.preview_at(offset, ev); // bytes published here that never arrived: `gap`
    wake_all();
}

void Seat::mirror_head(SeatSummary owner, std::string gone) {
    SLUICE_ASSERT(strand_.running_in_this_thread());
    mirror_head_ = std::make_unique<SeatSummary>(std::move(owner));
    mirror_gone_ = std::move(gone);
    update_summary();
}

} // namespace sluice::hub
