// Cluster node: taking seats over from shared storage (`serve --shared-seats`) — the owner lets
// a seat go before its lease can run out (when: the node's fence and renew, in node.cpp and
// node_tick.cpp), and a node claims a seat whose lease ran out.
//
// Why this is safe: one node writes a seat's folder at a time. An owner renews each lease every
// tick and lets a seat go (Hub::release: its turn cancelled, its transcript synced, nothing more
// published) once its last renewal that held was sent `lease - 2 ticks` ago, i.e. before Redis
// can let the lease expire. Another node claims a seat only with a SET on a lease that is free
// (Redis is the arbiter) and, unless the seat is its own from an earlier run, only after seeing
// it free for a whole lease more; so a Redis that restarted empty (every lease gone, every owner
// alive and about to renew) hands nobody's seat to another node.
#include "node_takeover.hpp"

#include "node_detail.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <spdlog/spdlog.h>

#include <utility>

namespace sluice::cluster::detail {

using redis::Reply;

namespace {

std::string released_reason(const std::string& why) {
    return "this node let the seat go (" + why + "); the node that takes its lease hosts it";
}

} // namespace

Takeover::Takeover(NodeContext ctx, Hosted hosted)
    : ctx_(std::move(ctx))
    , hosted_(std::move(hosted)) {
}

void Takeover::release(const std::string& id, const std::string& why) {
    released_.insert(id);
    if (!ctx_.hub->release(id, std::make_unique<MirrorSource>(ctx_.id))) {
        return;
    }
    spdlog::warn("cluster: seat {} let go: {}; the node that takes its lease hosts it", id, why);
    // Listed here meanwhile, unavailable with why (its window readable once Redis answers).
    if (auto placeholder = ctx_.hub->find(id); placeholder && placeholder->mirror()) {
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
Takeover::claim(std::map<std::string, Claimable> candidates, const std::set<std::string>& local) {
    const auto now = Clock::now();
    for (auto it = unowned_.begin(); it != unowned_.end();) {
        it = candidates.contains(it->first) ? std::next(it) : unowned_.erase(it);
    }
    for (const auto& [id, c] : candidates) {
        if (local.contains(id) || adopting_.contains(id)) {
            continue;
        }
        const auto since = unowned_.try_emplace(id, now).first->second;
        if (!c.now && now - since < ctx_.cfg.lease) {
            continue; // not yet seen free for a whole lease
        }
        const auto sent = Clock::now();
        std::vector<std::string> args{
            "EVAL",
            CLAIM_LUA,
            "1",
            ctx_.key(id, "owner"),
            ctx_.id,
            std::to_string(ctx_.cfg.lease.count())};
        auto [ec, r] = co_await ctx_.cmd->command(std::move(args));
        if (ec || r.type != Reply::Type::integer || r.integer != 1) {
            continue; // another node was first, or Redis went away
        }
        adopting_.insert(id);
        ctx_.hub->adopt(
            id,
            ctx_.strand,
            [this, life = ctx_.hold(), id = id, sent](
                const hub::Result<std::shared_ptr<hub::Seat>>& seat) { adopted(id, sent, seat); });
    }
}

void Takeover::adopted(
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
        std::vector<std::string> args{"EVAL", UNCLAIM_LUA, "1", ctx_.key(id, "owner"), ctx_.id};
        ctx_.cmd->async_command(std::move(args), [](boost::system::error_code, const Reply&) {});
        return;
    }
    hosted_(id, sent); // the node's own now, no longer a mirror
    released_.erase(id);
    spdlog::info(
        "cluster: seat {} taken over from its shared folder (its lease was free); hosted here", id);
}

void Takeover::list_folders() {
    if (std::exchange(listing_, true)) {
        return; // the last one still runs
    }
    ctx_.hub->folder_ids(
        ctx_.strand, [this, life = ctx_.hold()](hub::Result<std::vector<std::string>> ids) {
            listing_ = false;
            if (ids) {
                folders_ = std::set<std::string>(ids->begin(), ids->end());
            }
        });
}

} // namespace sluice::cluster::detail
