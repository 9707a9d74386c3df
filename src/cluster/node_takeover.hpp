// Cluster node, private: taking seats over from shared storage (`serve --shared-seats`).
#pragma once

#include "node_context.hpp"

#include <sluice/hub/hub.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace sluice::cluster::detail {

/// A seat that may be claimed (takeover): its lease is free, or this node's.
struct Claimable {
    bool now{false}; ///< this node's own seat (its lease, or its registry entry): no wait
};

/// A node's takeover of seats: the seats it let go (their placeholders listed unavailable
/// until another node holds them), the free leases it has seen and since when, the claims and
/// adoptions of those free for a whole lease, and the listing of the shared seats folder.
/// Why this is safe: node_takeover.cpp.
///
/// @par Thread safety
/// Strand-confined: every member runs on the node's strand.
class Takeover {
public:
    using Clock = std::chrono::steady_clock;

    /// Called on the strand when a claimed seat is opened here (`sent`: when its claim was sent).
    using Hosted = std::function<void(const std::string& id, Clock::time_point sent)>;

    /// The takeover of the node `ctx` describes; `hosted` is told of each seat it adopts.
    Takeover(NodeContext ctx, Hosted hosted);

    /// Lets seat `id` go (the caller no longer counts it as its own): a mirror placeholder
    /// takes its place, unavailable with `why`.
    void release(const std::string& id, const std::string& why);

    /// Claims the `candidates` seen free for a whole lease (or this node's own at once),
    /// except those in `local`, and adopts each claimed one from its folder.
    boost::asio::awaitable<void>
    claim(std::map<std::string, Claimable> candidates, const std::set<std::string>& local);

    /// Lists the shared seats folder on the hub's writer unless a listing still runs; the
    /// result is `folders()` from when it completes.
    void list_folders();

    /// The shared seats folder's seat ids, as last listed.
    [[nodiscard]] const std::set<std::string>& folders() const noexcept { return folders_; }

    /// Whether this run let seat `id` go (and nobody took it here since).
    [[nodiscard]] bool let_go(const std::string& id) const { return released_.contains(id); }

    /// Seat `id` is gone (its mirror dropped): no longer one this run let go.
    void forget(const std::string& id) { released_.erase(id); }

    /// Leases seen free are seen afresh (a new connection: maybe a Redis that restarted empty).
    void forget_unowned() { unowned_.clear(); }

private:
    void adopted(
        const std::string& id,
        Clock::time_point sent,
        const hub::Result<std::shared_ptr<hub::Seat>>& r);

    NodeContext ctx_;
    Hosted hosted_;
    std::map<std::string, Clock::time_point> unowned_; // lease seen free since
    std::set<std::string> adopting_;                   // claimed, being opened
    std::set<std::string> released_;                   // let go by this run
    std::set<std::string> folders_;                    // the shared seats folder, as last listed
    bool listing_{false};                              // a listing runs on the hub's writer
};

} // namespace sluice::cluster::detail
