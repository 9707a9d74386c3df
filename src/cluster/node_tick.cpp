// Cluster node: the tick — leases, the registry, mirrors of other nodes' seats, position check.
#include "node_detail.hpp"
#include "node_mirror.hpp"
#include "node_takeover.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/cluster/node.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <utility>

namespace sluice::cluster {

namespace json = boost::json;
using redis::Reply;
using namespace detail;

// ---- registry, leases, position check --------------------------------------------------------

net::awaitable<void> Node::tick_loop() {
    auto self = shared_from_this();
    while (!stopped_) {
        co_await tick();
        timer_.expires_after(cfg_.tick);
        co_await timer_.async_wait(TUPLE);
    }
}

net::awaitable<void> Node::tick() {
    if (cfg_.takeover) {
        fence(); // before anything that needs Redis: an owner cut off from it lets seats go
    }
    if (!cmd_->connected()) {
        co_return;
    }
    const auto local = co_await renew();
    co_await count_followers(local);
    co_await drop_gone();
    std::map<std::string, detail::Claimable> claimable; // takeover
    co_await follow_registry(local, claimable);
    mirrors_->unfollow_idle();
    if (cfg_.takeover) {
        co_await takeover_->claim(std::move(claimable), local);
    }
}

// This node's seats: each lease renewed (or claimed) with the seat's registry entry; a seat not
// yet in its stream (restored, or Redis lost it) seeded. @return the seats hosted.
net::awaitable<std::set<std::string>> Node::renew() {
    const auto registry = cfg_.prefix + "seats";
    std::set<std::string> local;
    for (const auto& seat : hub_->list()) {
        if (seat->mirror()) {
            continue;
        }
        local.insert(seat->id());
        std::vector<std::string> args{
            "EVAL",
            LEASE_LUA,
            "2",
            key(seat->id(), "owner"),
            registry,
            id_,
            std::to_string(cfg_.lease.count()),
            seat->id(),
            entry_json(seat->summary(), id_)};
        const auto sent = Clock::now();
        auto [ec, r] = co_await cmd_->command(std::move(args));
        if (!ec && r.type == Reply::Type::integer && r.integer == 0) {
            if (cfg_.takeover && !seat->foreign()) {
                release(seat->id(), "another node holds its lease");
                local.erase(seat->id());
                continue;
            }
            spdlog::warn("cluster: seat {} is leased by another node", seat->id());
        }
        bool seeded = false;
        {
            std::lock_guard lock(mu_);
            auto& o = owned_[seat->id()];
            seeded = !o.epoch.empty();
            if (!ec && r.type == Reply::Type::integer && r.integer == 1) {
                o.renewed = sent;
            }
        }
        if (!seeded) {
            net::post(seat->strand(), [self = shared_from_this(), seat] {
                bool again = false;
                {
                    std::lock_guard lock(self->mu_);
                    again = self->owned_[seat->id()].epoch != seat->epoch();
                }
                if (again) {
                    self->seed(*seat); // a restored seat, or Redis lost its stream
                }
            });
        }
    }
    co_return local;
}

// Previews of a seat go out only while some node follows it (pub/sub loses nothing that matters:
// a follower that joins finds what it missed counted, a `gap`).
net::awaitable<void> Node::count_followers(const std::set<std::string>& local) {
    if (!local.empty()) {
        std::vector<std::string> numsub{"PUBSUB", "NUMSUB"};
        for (const auto& id : local) {
            numsub.push_back(key(id, "c"));
        }
        auto [nec, nr] = co_await cmd_->command(std::move(numsub));
        if (!nec && nr.type == Reply::Type::array) {
            const auto head = cfg_.prefix + "seat:";
            std::lock_guard lock(mu_);
            for (std::size_t i = 0; i + 1 < nr.elements.size(); i += 2) {
                const auto& ch = nr.elements[i].str;
                if (ch.size() < head.size() + 2) {
                    continue;
                }
                auto it = owned_.find(ch.substr(head.size(), ch.size() - head.size() - 2));
                if (it != owned_.end()) {
                    it->second.watched = nr.elements[i + 1].integer > 0;
                }
            }
        }
    }
}

// Seats this node dropped: out of the registry, their keys gone. What is hosted is read again
// here (a seat taken over while this tick waited on Redis is hosted, not gone).
net::awaitable<void> Node::drop_gone() {
    const auto registry = cfg_.prefix + "seats";
    std::vector<std::string> gone;
    {
        std::set<std::string> hosted;
        for (const auto& seat : hub_->list()) {
            if (!seat->mirror()) {
                hosted.insert(seat->id());
            }
        }
        std::lock_guard lock(mu_);
        for (auto it = owned_.begin(); it != owned_.end();) {
            if (hosted.contains(it->first)) {
                ++it;
            } else {
                gone.push_back(it->first);
                it = owned_.erase(it);
            }
        }
    }
    for (const auto& id : gone) {
        std::vector<std::string> bye{"PUBLISH", key(id, "c"), "x"}; // its mirrors go at once
        co_await cmd_->command(std::move(bye));
        std::vector<std::string> args{"DEL", key(id, "s"), key(id, "m"), key(id, "owner")};
        co_await cmd_->command(std::move(args));
        std::vector<std::string> hdel{"HDEL", registry, id};
        co_await cmd_->command(std::move(hdel));
    }
}

// Other nodes' seats: mirrors, their heads, and a position check for the followed ones; with
// takeover, the seats this node may claim.
net::awaitable<void> Node::follow_registry(
    const std::set<std::string>& local, std::map<std::string, detail::Claimable>& claimable) {
    const auto registry = cfg_.prefix + "seats";
    std::vector<std::string> list{"EVAL", LIST_LUA, "1", registry, cfg_.prefix + "seat:"};
    auto [ec, r] = co_await cmd_->command(std::move(list));
    if (ec || r.type != Reply::Type::array) {
        co_return;
    }
    std::set<std::string> remote;
    std::set<std::string> registered; // takeover
    for (std::size_t i = 0; i + 2 < r.elements.size(); i += 3) {
        const auto& id = r.elements[i].str;
        const auto& owner = r.elements[i + 2].str;
        if (local.contains(id)) {
            continue;
        }
        boost::system::error_code jec;
        auto v = json::parse(r.elements[i + 1].str, jec);
        if (jec || !v.is_object()) {
            continue;
        }
        const auto& o = v.as_object();
        const auto node = str_of(o, "node");
        if (cfg_.takeover) {
            registered.insert(id);
            if (owner.empty() || owner == id_) {
                // Free, or this node's from an earlier run: this node's own seat is claimed at
                // once (unless this run let it go), another's once seen free for a lease.
                claimable[id].now = (node == id_ || owner == id_) && !takeover_->let_go(id);
            }
        }
        if (node == id_) {
            // Listed by this node's earlier run, or let go by this one: never a mirror of
            // itself; one it let go stays listed (unavailable, with why) until another holds it.
            if (takeover_->let_go(id)) {
                remote.insert(id);
            }
            continue;
        }
        remote.insert(id);
        hub::SeatSpec spec;
        spec.id = id;
        spec.name = str_of(o, "name");
        spec.agent = str_of(o, "agent");
        spec.epoch = str_of(o, "epoch");
        auto seat = hub_->add_mirror(std::move(spec), std::make_unique<MirrorSource>(node));
        auto* mirror = MirrorSource::of(*seat);
        if (mirror == nullptr) {
            continue;
        }
        if (mirror->owner() != node) {
            mirror->owner(node); // taken over: commands go to the new owner
        }
        hub::SeatSummary head;
        head.name = str_of(o, "name");
        head.state = parse_state(str_of(o, "state"));
        head.degraded =
            o.contains("degraded") && o.at("degraded").is_bool() && o.at("degraded").as_bool();
        head.reason = str_of(o, "reason");
        head.turns = num_of(o, "turns");
        head.frames = num_of(o, "frames");
        std::string why;
        if (owner.empty()) {
            why = cfg_.takeover
                      ? "its owner node " + node + " is gone; a node takes the seat over "
                            + "from its shared folder once its lease ran out"
                      : "its owner node " + node + " is gone (the seat comes back with it)";
        }
        net::post(
            seat->strand(), [seat, mirror, head = std::move(head), why = std::move(why)]() mutable {
                mirror->owner_head(std::move(head), std::move(why));
            });
        if (mirrors_->followed(id)) {
            mirrors_->sync(seat, /*full=*/false); // the position check: a lost notice shows here
        }
    }
    if (cfg_.takeover) {
        // A shared folder no registry entry names has no lease either (a lease and its entry
        // are written together): a seat whose owner died while Redis lost everything. One this
        // node let go stays listed while its folder is there. The folder is listed on the
        // hub's writer (shared storage may be slow), its last listing used here.
        takeover_->list_folders();
        for (const auto& id : takeover_->folders()) {
            if (takeover_->let_go(id)) {
                remote.insert(id);
            }
            if (!local.contains(id) && !registered.contains(id)) {
                claimable.try_emplace(id);
            }
        }
    }
    mirrors_->sweep_missing(remote);
}

} // namespace sluice::cluster
