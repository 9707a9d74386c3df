// Cluster node: taking seats over from shared storage (`serve --shared-seats`) — the owner lets
// a seat go before its lease can run out, and a node claims a seat whose lease ran out.
//
// Why this is safe: one node writes a seat's folder at a time. An owner renews each lease every
// tick and lets a seat go (Hub::release: its turn cancelled, its transcript synced, nothing more
// published) once its last renewal that held was sent `lease - 2 ticks` ago, i.e. before Redis
// can let the lease expire. Another node claims a seat only with a SET on a lease that is free
// (Redis is the arbiter) and, unless the seat is its own from an earlier run, only after seeing
// it free for a whole lease more; so a Redis that restarted empty (every lease gone, every owner
// alive and about to renew) hands nobody's seat to another node.
#include "node_detail.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/cluster/node.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <spdlog/spdlog.h>

namespace sluice::cluster {

using redis::Reply;
using namespace detail;

namespace {

std::string released_reason(const std::string& why) {
    return "this node let the seat go (" + why + "); the node that takes its lease hosts it";
}

} // namespace

void Node::fence() {
    const auto now = Clock::now();
    const auto limit = cfg_.lease - 2 * cfg_.tick;
    std::vector<std::string> lost;
    for (const auto& seat : hub_->list()) {
        if (seat->mirror() || seat->foreign()) {
            continue;
        }
        std::lock_guard lock(mu_);
        auto& o = owned_[seat->id()];
        if (o.renewed == Clock::time_point{}) {
            o.renewed = now; // hosted since (made or opened here, not yet leased)
        } else if (now - o.renewed > limit) {
            lost.push_back(seat->id());
        }
    }
    for (const auto& id : lost) {
        release(
            id,
            "its lease was not renewed for "
                + std::to_string(
                    std::chrono::duration_cast<std::chrono::milliseconds>(limit).count())
                + " ms (Redis does not answer)");
    }
}

void Node::release(const std::string& id, const std::string& why) {
    {
        std::lock_guard lock(mu_);
        owned_.erase(id); // not `gone`: its keys are the next owner's
    }
    released_.insert(id);
    if (!hub_->release(id, std::make_unique<MirrorSource>(id_))) {
        return;
    }
    spdlog::warn("cluster: seat {} let go: {}; the node that takes its lease hosts it", id, why);
    // Listed here meanwhile, unavailable with why (its window readable once Redis answers).
    if (auto placeholder = hub_->find(id); placeholder && placeholder->mirror()) {
        auto head = placeholder->summary();
        head.state = hub::SeatState::unavailable;
        net::post(
            placeholder->strand(),
            [placeholder, head = std::move(head), why = released_reason(why)]() mutable {
                if (auto* mirror = MirrorSource::of(*placeholder)) {
                    mirror->owner_head(std::move(head), std::move(why));
                }
            });
    }
}

net::awaitable<void>
Node::claim(std::map<std::string, Claimable> candidates, const std::set<std::string>& local) {
    const auto now = Clock::now();
    for (auto it = unowned_.begin(); it != unowned_.end();) {
        it = candidates.contains(it->first) ? std::next(it) : unowned_.erase(it);
    }
    for (const auto& [id, c] : candidates) {
        if (local.contains(id) || adopting_.contains(id)) {
            continue;
        }
        const auto since = unowned_.try_emplace(id, now).first->second;
        if (!c.now && now - since < cfg_.lease) {
            continue; // not yet seen free for a whole lease
        }
        const auto sent = Clock::now();
        std::vector<std::string> args{
            "EVAL", CLAIM_LUA, "1", key(id, "owner"), id_, std::to_string(cfg_.lease.count())};
        auto [ec, r] = co_await cmd_->command(std::move(args));
        if (ec || r.type != Reply::Type::integer || r.integer != 1) {
            continue; // another node was first, or Redis went away
        }
        adopting_.insert(id);
        hub_->adopt(
            id,
            strand_,
            [self = shared_from_this(), id = id, sent](
                const hub::Result<std::shared_ptr<hub::Seat>>& seat) {
                self->adopted(id, sent, seat);
            });
    }
}

void Node::adopted(
    const std::string& id,
    Clock::time_point sent,
    const hub::Result<std::shared_ptr<hub::Seat>>& r) {
    adopting_.erase(id);
    unowned_.erase(id);
    if (!r) {
        if (r.error().code == make_error_code(errc::conflict)) {
            return; // hosted here already
        }
        spdlog::warn("cluster: seat {} was claimed but not opened: {}", id, r.error().message);
        std::vector<std::string> args{"EVAL", UNCLAIM_LUA, "1", key(id, "owner"), id_};
        cmd_->async_command(std::move(args), [](boost::system::error_code, const Reply&) {});
        return;
    }
    {
        std::lock_guard lock(mu_);
        auto& o = owned_[id];
        o.epoch.clear(); // seeded from its window at its first publish or the next tick
        o.renewed = sent;
        followed_.erase(id);
    }
    missing_.erase(id);
    idle_.erase(id);
    released_.erase(id);
    sub_->unsubscribe(key(id, "c"));
    spdlog::info(
        "cluster: seat {} taken over from its shared folder (its lease was free); hosted here", id);
}

} // namespace sluice::cluster
