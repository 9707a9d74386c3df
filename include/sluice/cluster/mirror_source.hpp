// MirrorSource: a seat another node owns, held here for this node's viewers and fed from the
// owner's Redis stream by the Node. No agent, no transcript; its window, resume and recovery rules
// are the seat's own (hub::Feed).
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/core/event.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/source.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::cluster {

/// A frame as a mirror receives it from the owner's stream: the frame and whether it opens a
/// turn (decided once, by the owner's scan).
struct MirrorFrame {
    FramePtr frame;    ///< the frame (its held form)
    bool opens{false}; ///< whether it opens a turn
};

/// The source of a mirror seat. Its viewers wait (nothing is sent) until the first `reset`.
/// Every member but `owner` runs on its seat's strand.
class MirrorSource final : public hub::Source {
public:
    /// A mirror of a seat `owner` owns.
    explicit MirrorSource(std::string owner);

    /// A mirror seat in `hub` terms: `spec` (its id, name, epoch as listed) over a new source of
    /// `owner`'s. Its options' folder is cleared: nothing of a mirror is on this node's disk.
    [[nodiscard]] static std::shared_ptr<hub::Seat>
    open(boost::asio::io_context& io, hub::SeatSpec spec, hub::SeatOptions opt, std::string owner);

    /// The mirror source of `seat`, or null when it is not a mirror.
    [[nodiscard]] static MirrorSource* of(hub::Seat& seat) noexcept;

    [[nodiscard]] Kind kind() const noexcept override { return Kind::mirror; }

    void bind(hub::SourceHost& host, std::weak_ptr<hub::SourceHost> weak) override;
    /// Nothing is known yet: the broker is asked to feed it; its viewers start at the first
    /// reset.
    void wanted() override;

    bool wait_open(std::function<void()> /*then*/) override { return false; }

    void head(hub::FeedHead& head) const override;
    void summarize(hub::SeatSummary& s) const override;
    [[nodiscard]] hub::Failure refusal() const override;
    [[nodiscard]] std::string owner() const override;

    /// Its seat has another owner now (taken over from a dead one): commands go there. Safe
    /// from any thread.
    void owner(std::string node);

    /// Whether it has had its first reset (its viewers are served).
    [[nodiscard]] bool ready() const noexcept;

    /// Replaces the window with `frames` from position `first` under `epoch`. A new epoch (or
    /// the first reset) restarts every viewer: waiting ones resume by their Last-Event-ID, the
    /// others get `connected` (recovered:false).
    void reset(std::string epoch, std::uint64_t first, std::vector<MirrorFrame> frames);

    /// Appends frames from position `first` of `epoch`. @return false when they do not follow
    /// the window (a hole, or another epoch): the caller resyncs; frames already held are
    /// skipped (a duplicate notice).
    bool append(std::string_view epoch, std::uint64_t first, std::vector<MirrorFrame> frames);

    /// A turn-state event from the owner, to go before position `before`.
    void turn_state(std::uint64_t before, std::string data);

    /// A preview from the owner (Broker::preview's `pos` and `offset`), for the viewers if it
    /// follows the window's last frame: previews of an older position are superseded by frames
    /// held already (dropped silently), of a newer one cannot be shown in order (dropped; the
    /// next preview at that position counts them lost). Bytes the owner published at this
    /// position that never arrived are reported lost (`gap`).
    void
    preview(std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev);

    /// The owner's figures for the seat (name, state, turns), or the reason it is gone (the
    /// seat is then `unavailable` with it).
    void owner_head(hub::SeatSummary head, std::string gone);

    /// A mirror nobody has watched for a while stops being fed: when it has no subscriber, its
    /// window is let go and its next viewer asks the broker again, as its first did.
    /// @return whether it stopped (false: it has viewers again).
    bool unfollow();

private:
    hub::SourceHost* host_{nullptr};
    std::weak_ptr<hub::SourceHost> weak_;
    mutable std::mutex owner_mu_;
    std::string owner_; // guarded by owner_mu_
    bool asked_{false};
    bool unfollowed_{false};                 // let go by unfollow until its next viewer asks
    std::unique_ptr<hub::SeatSummary> head_; // the owner's figures, once known
    std::string gone_;
};

} // namespace sluice::cluster
