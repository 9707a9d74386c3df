// Cluster node, private: mirrors of other nodes' seats followed for this node's viewers.
#pragma once

#include "node_context.hpp"

#include <sluice/hub/seat.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace sluice::cluster::detail {

/// A node's followed mirrors (cluster::MirrorSource seats): at a mirror's first viewer its
/// channel is subscribed, then its head and stream read; the seat-channel notices (frames,
/// previews, turn states, a new epoch, the seat gone) are applied on the seat's strand; a
/// mirror out of the registry for MIRROR_MISSING_TICKS ticks goes, one without a viewer for
/// MIRROR_IDLE_TICKS ticks is no longer followed.
///
/// @par Thread safety
/// `wanted`, `sync`, `notice`, `followed` and `unfollow_locked` from any thread (the followed
/// seats are guarded by the node's `mu`, a seat's window read on its strand); everything else
/// on the node's strand.
class Mirrors {
public:
    /// Called on the strand when a mirror goes (seat `id` is gone from the hub).
    using Dropped = std::function<void(const std::string& id)>;

    /// The mirrors of the node `ctx` describes; `dropped` is told of each one that goes.
    Mirrors(NodeContext ctx, Dropped dropped);

    /// `seat` (a mirror) has a viewer: it is followed (see hub::Broker::mirror_wanted).
    void wanted(const std::shared_ptr<hub::Seat>& seat);

    /// Reads `seat` again on its strand: whole when `full` (or not yet read), else from its end.
    void sync(const std::shared_ptr<hub::Seat>& seat, bool full);

    /// Every followed mirror reads again from its end (notices may have been missed).
    void sync_followed();

    /// A notice on the channel of seat `id` (`<prefix>seat:<id>:c`), `payload` not empty.
    void notice(const std::string& id, const std::string& payload);

    /// Whether seat `id` is followed.
    [[nodiscard]] bool followed(const std::string& id);

    /// Seat `id` is no longer followed. @pre the node's `mu` is held.
    void unfollow_locked(const std::string& id) { followed_.erase(id); }

    /// Seat `id` is hosted here now (taken over): its counts go, its channel is unsubscribed.
    void hosted(const std::string& id);

    /// Counts a tick for each mirror not in `remote` (the registry's other seats) and drops
    /// those missing for MIRROR_MISSING_TICKS ticks.
    void sweep_missing(const std::set<std::string>& remote);

    /// Stops following mirrors without a viewer for MIRROR_IDLE_TICKS ticks.
    void unfollow_idle();

private:
    boost::asio::awaitable<void> follow(std::shared_ptr<hub::Seat> seat);
    void drop(const std::string& id);

    NodeContext ctx_;
    Dropped dropped_;
    std::map<std::string, std::weak_ptr<hub::Seat>> followed_; // mirrors with viewers (mu)
    std::map<std::string, int> missing_; // mirrors out of the registry, ticks (on the strand)
    std::map<std::string, int> idle_;    // followed mirrors without a viewer, ticks (strand)
};

} // namespace sluice::cluster::detail
