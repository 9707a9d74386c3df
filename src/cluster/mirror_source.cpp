// MirrorSource: a seat of another node's, fed from the owner's stream (cluster/mirror_source.hpp).
#include <sluice/cluster/mirror_source.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/hub/broker.hpp>
#include <sluice/hub/feed.hpp>

#include <chrono>
#include <utility>

namespace sluice::cluster {

MirrorSource::MirrorSource(std::string owner)
    : owner_(std::move(owner)) {
    SLUICE_INVARIANT(!owner_.empty(), "a mirror names its owner node");
}

std::shared_ptr<hub::Seat> MirrorSource::open(
    boost::asio::io_context& io, hub::SeatSpec spec, hub::SeatOptions opt, std::string owner) {
    opt.dir.clear(); // nothing of a mirror is on this node's disk
    return hub::Seat::open_fed(
        io, std::move(spec), std::move(opt), std::make_unique<MirrorSource>(std::move(owner)));
}

MirrorSource* MirrorSource::of(hub::Seat& seat) noexcept {
    auto* source = seat.source();
    return source != nullptr && source->kind() == Kind::mirror ? static_cast<MirrorSource*>(source)
                                                               : nullptr;
}

void MirrorSource::bind(hub::SourceHost& host, std::weak_ptr<hub::SourceHost> weak) {
    host_ = &host;
    weak_ = std::move(weak);
    host_->feed().unready(); // its viewers wait for its first reset
}

void MirrorSource::wanted() {
    const auto& broker = host_->options().broker;
    if (std::exchange(asked_, true) || !broker) {
        return;
    }
    unfollowed_ = false;
    broker->mirror_wanted(host_->seat());
}

std::string MirrorSource::owner() const {
    std::lock_guard lock(owner_mu_);
    return owner_;
}

void MirrorSource::owner(std::string node) {
    std::lock_guard lock(owner_mu_);
    owner_ = std::move(node);
}

bool MirrorSource::ready() const noexcept {
    return host_->feed().ready();
}

void MirrorSource::head(hub::FeedHead& head) const {
    // No turn of its own: the owner's. Its partial is what the owner's previews brought since
    // the last frame, cleared by frames and by the turn's end.
    using hub::SeatState;
    head.running = head_
                   && (head_->state == SeatState::running || head_->state == SeatState::queued
                       || head_->state == SeatState::waiting);
    head.waiting = head_ && head_->state == SeatState::waiting;
    if (head_) {
        head.turn = head_->turns;
    }
    head.partial_open = true;
}

void MirrorSource::summarize(hub::SeatSummary& s) const {
    if (head_) {
        // The owner's figures, with this node's window and viewers.
        s.name = head_->name;
        s.state = head_->state;
        s.turns = head_->turns;
        s.degraded = head_->degraded;
        s.reason = head_->reason;
        s.last_activity = head_->last_activity;
        if (!host_->feed().ready()) {
            s.frames = head_->frames; // not followed yet: the owner's count
        }
    }
    if (!gone_.empty()) {
        s.state = hub::SeatState::unavailable;
        s.reason = gone_;
    }
}

hub::Failure MirrorSource::refusal() const {
    return hub::Failure::of(errc::conflict, "the seat is owned by node " + owner());
}

void MirrorSource::reset(std::string epoch, std::uint64_t first, std::vector<MirrorFrame> frames) {
    if (host_->closed() || unfollowed_) {
        return; // unfollowed: a read still on its way is not applied
    }
    auto& spec = host_->spec();
    const bool new_epoch = epoch != spec.epoch;
    spec.epoch = std::move(epoch);
    Window window(host_->options().budget, first);
    for (auto& f : frames) {
        window.append(std::move(f.frame), f.opens);
    }
    // Waiting viewers resume by their Last-Event-ID (recovered when still in the window); a new
    // epoch starts the others again with `connected`. Same epoch (a hole filled from the stream):
    // viewers continue by cursor; one behind the new front is let go and resumes by
    // Last-Event-ID, as on the owner.
    host_->feed().replace(spec.epoch, std::move(window), /*restart=*/new_epoch);
    host_->changed();
}

bool MirrorSource::unfollow() {
    auto& feed = host_->feed();
    if (feed.subscribers() > 0) {
        return false;
    }
    asked_ = false;
    unfollowed_ = true;
    feed.unready();
    host_->changed();
    return true;
}

bool MirrorSource::append(
    std::string_view epoch, std::uint64_t first, std::vector<MirrorFrame> frames) {
    if (unfollowed_) {
        return true; // nothing to read again: its next viewer asks for it
    }
    auto& feed = host_->feed();
    const auto end = feed.window().end();
    if (!feed.ready() || epoch != host_->spec().epoch || first > end) {
        return false;
    }
    const auto skip = end - first; // held already: a duplicate
    if (skip >= frames.size()) {
        return true;
    }
    for (std::size_t i = skip; i < frames.size(); ++i) {
        feed.append(std::move(frames[i].frame), frames[i].opens);
    }
    feed.published();
    host_->touched(std::chrono::system_clock::now());
    host_->changed();
    return true;
}

// By value as the owner's push_turn_state hands it on: each viewer keeps its own copy.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void MirrorSource::turn_state(std::uint64_t before, std::string data) {
    auto& feed = host_->feed();
    if (!feed.ready()) {
        return; // the reset's connected carries the state
    }
    if (data.find(R"("state":"started")") == std::string::npos) {
        feed.clear_partial(); // the turn is over: nothing of it is open any more
    }
    feed.turn_state(before, data);
    feed.wake_all();
}

void MirrorSource::preview(
    std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) {
    auto& feed = host_->feed();
    if (!feed.ready() || epoch != host_->spec().epoch || pos != feed.window().end()) {
        return; // superseded by frames held (older), or ahead of frames still to come (newer)
    }
    feed.preview_at(offset, ev); // bytes published here that never arrived: `gap`
    feed.wake_all();
}

void MirrorSource::owner_head(hub::SeatSummary head, std::string gone) {
    head_ = std::make_unique<hub::SeatSummary>(std::move(head));
    gone_ = std::move(gone);
    host_->changed();
}

} // namespace sluice::cluster
