// Cluster node: start and stop, the owner's side (seed, append, turn states, previews), and the
// messages and hooks handed to its parts.
#include "node_detail.hpp"
#include "node_forward.hpp"
#include "node_mirror.hpp"
#include "node_takeover.hpp"

#include <sluice/cluster/node.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <fstream>
#include <random>

namespace sluice::cluster {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;
using namespace detail;

namespace {

std::string random_id() {
    std::random_device rd;
    std::uniform_int_distribution<unsigned> d(0, 15);
    std::string s;
    for (int i = 0; i < 16; ++i) {
        s += "0123456789abcdef"[d(rd)];
    }
    return s;
}

// The node id kept in the data dir: a restarted node is the same node (it owns its seats).
std::string node_id(const std::filesystem::path& dir) {
    const auto file = dir / "cluster-node";
    std::ifstream in(file);
    std::string id;
    if (in >> id && id.size() == 16) {
        return id;
    }
    id = random_id();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (auto r = safe_write(file, id + "\n"); !r) {
        spdlog::warn(
            "cluster: cannot keep the node id in {}: {}", file.string(), r.error().message());
    }
    return id;
}

} // namespace

std::shared_ptr<Node> Node::create(net::io_context& io, NodeConfig cfg) {
    return std::shared_ptr<Node>(new Node(io, std::move(cfg)));
}

Node::Node(net::io_context& io, NodeConfig cfg)
    : io_(io)
    , strand_(net::make_strand(io))
    , cfg_(std::move(cfg))
    , id_(node_id(cfg_.data_dir))
    , timer_(strand_) {
    redis::ClientOptions o;
    o.url = cfg_.url;
    o.tls_ca_file = cfg_.tls_ca_file;
    o.tls_cert_file = cfg_.tls_cert_file;
    o.tls_key_file = cfg_.tls_key_file;
    cmd_ = redis::Client::create(io, o);
    sub_ = redis::Client::create(io, o);
    const NodeContext ctx{
        strand_, cfg_, id_, hub_, cmd_, sub_, mu_, [this]() -> std::shared_ptr<void> {
            return shared_from_this();
        }};
    forwards_ = std::make_unique<Forwards>(ctx);
    mirrors_ =
        std::make_unique<Mirrors>(ctx, [this](const std::string& id) { takeover_->forget(id); });
    takeover_ = std::make_unique<Takeover>(
        ctx, [this](const std::string& id, Clock::time_point sent) { hosted(id, sent); });
}

Node::~Node() = default;

std::string Node::key(const std::string& seat, const char* what) const {
    return seat_key(cfg_.prefix, seat, what);
}

void Node::on_forwarded(std::function<void(hub::ForwardedRequest, hub::ForwardDone)> fn) {
    forwards_->on_forwarded(std::move(fn));
}

void Node::forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done) {
    forwards_->forward(owner, std::move(req), std::move(done));
}

void Node::mirror_wanted(const std::shared_ptr<hub::Seat>& seat) {
    mirrors_->wanted(seat);
}

std::optional<std::string> Node::start(hub::Hub& hub, std::chrono::milliseconds timeout) {
    hub_ = &hub;
    sub_->on_message([weak = weak_from_this()](const std::string& ch, const std::string& p) {
        if (auto self = weak.lock()) {
            self->on_message(ch, p);
        }
    });
    sub_->on_connect([weak = weak_from_this()] {
        // Messages may have been missed while disconnected: every followed mirror reads again.
        if (auto self = weak.lock()) {
            net::post(self->strand_, [self] { self->mirrors_->sync_followed(); });
        }
    });
    cmd_->on_connect([weak = weak_from_this()] {
        // A new connection may be to a Redis that lost everything: seed every stream again.
        if (auto self = weak.lock()) {
            {
                std::lock_guard lock(self->mu_);
                for (auto& [id, o] : self->owned_) {
                    o.epoch.clear();
                }
            }
            // Leases seen free before are seen afresh (a Redis that restarted empty lists no
            // lease until every live owner renewed).
            net::post(self->strand_, [self] { self->takeover_->forget_unowned(); });
        }
    });
    cmd_->start();
    sub_->start();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!(cmd_->connected() && sub_->connected())
           && std::chrono::steady_clock::now() < deadline) {
        io_.run_for(std::chrono::milliseconds(10));
    }
    if (io_.stopped()) {
        io_.restart();
    }
    if (!(cmd_->connected() && sub_->connected())) {
        cmd_->stop();
        sub_->stop();
        auto why = cmd_->connected() ? sub_->last_error() : cmd_->last_error();
        return "Redis at " + cfg_.url.display() + " does not answer (waited "
               + std::to_string(timeout.count()) + " ms)" + (why.empty() ? "" : ": " + why);
    }
    spdlog::info("cluster: node {} on Redis {}", id_, cfg_.url.display());
    net::co_spawn(
        strand_,
        [self = shared_from_this()]() -> net::awaitable<void> {
            // Commands forwarded to this node, and answers to the ones it forwarded.
            auto ec = co_await self->sub_->subscribe(self->cfg_.prefix + "node:" + self->id_);
            if (ec) {
                spdlog::warn("cluster: cannot subscribe to the node channel: {}", ec.message());
            }
        },
        net::detached);
    net::co_spawn(strand_, tick_loop(), [](const std::exception_ptr& e) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                spdlog::error("cluster: tick loop ended: {}", x.what());
            }
        }
    });
    return std::nullopt;
}

void Node::stop() {
    net::post(strand_, [self = shared_from_this()] {
        self->stopped_ = true;
        self->timer_.cancel();
        self->cmd_->stop();
        self->sub_->stop();
    });
}

// ---- messages ------------------------------------------------------------------------------

void Node::on_message(const std::string& channel, const std::string& payload) {
    if (channel == cfg_.prefix + "node:" + id_) {
        on_node_message(payload);
        return;
    }
    // <prefix>seat:<id>:c
    const auto head = cfg_.prefix + "seat:";
    if (!channel.starts_with(head) || !channel.ends_with(":c") || payload.empty()) {
        return;
    }
    mirrors_->notice(channel.substr(head.size(), channel.size() - head.size() - 2), payload);
}

void Node::on_node_message(const std::string& payload) {
    boost::system::error_code jec;
    auto v = json::parse(payload, jec);
    if (jec || !v.is_object()) {
        return;
    }
    const auto& o = v.as_object();
    if (const auto watch = str_of(o, "watch"); !watch.empty()) {
        // A node follows one of this node's seats from now on: its previews go out at once,
        // not from the next tick's count.
        std::lock_guard lock(mu_);
        if (auto it = owned_.find(watch); it != owned_.end()) {
            it->second.watched = true;
        }
        return;
    }
    forwards_->received(o);
}

// ---- takeover (the rest in node_takeover.cpp) -----------------------------------------------

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
    takeover_->release(id, why);
}

void Node::hosted(const std::string& id, Clock::time_point sent) {
    {
        std::lock_guard lock(mu_);
        auto& o = owned_[id];
        o.epoch.clear(); // seeded from its window at its first publish or the next tick
        o.renewed = sent;
        mirrors_->unfollow_locked(id);
    }
    mirrors_->hosted(id);
}

// ---- owner ---------------------------------------------------------------------------------

void Node::published(hub::Seat& seat, std::uint64_t first) {
    bool seeded = false;
    {
        std::lock_guard lock(mu_);
        auto& o = owned_[seat.id()];
        seeded = o.epoch == seat.epoch();
    }
    if (seeded) {
        append(seat, first);
    } else {
        seed(seat);
    }
}

void Node::seed(hub::Seat& seat) {
    const auto& w = seat.window();
    std::vector<std::string> args{
        "EVAL",
        SEED_LUA,
        "3",
        key(seat.id(), "s"),
        key(seat.id(), "m"),
        key(seat.id(), "c"),
        seat.epoch(),
        std::to_string(w.first())};
    for (auto p = w.first(); p < w.end(); ++p) {
        args.emplace_back(store_frame(w.at(p)->json()));
        args.emplace_back(w.opens_turn(p) ? "1" : "0");
    }
    {
        std::lock_guard lock(mu_);
        auto& o = owned_[seat.id()];
        o.epoch = seat.epoch(); // appends issued after this one run after it (one connection)
    }
    cmd_->async_command(
        std::move(args),
        [self = shared_from_this(), id = seat.id()](error_code ec, const Reply& r) {
            if (ec || r.is_error()) {
                log_failure("seeding a seat's stream", ec, r);
                std::lock_guard lock(self->mu_);
                self->owned_[id].epoch.clear(); // seeded again at the next publish or tick
            }
        });
}

void Node::append(hub::Seat& seat, std::uint64_t first) {
    const auto& w = seat.window();
    first = std::max(first, w.first());
    if (first >= w.end()) {
        return;
    }
    std::vector<std::string> args{
        "EVAL",
        APPEND_LUA,
        "3",
        key(seat.id(), "s"),
        key(seat.id(), "m"),
        key(seat.id(), "c"),
        seat.epoch(),
        std::to_string(first),
        std::to_string(w.first())};
    for (auto p = first; p < w.end(); ++p) {
        args.emplace_back(store_frame(w.at(p)->json()));
        args.emplace_back(w.opens_turn(p) ? "1" : "0");
    }
    cmd_->async_command(
        std::move(args),
        [self = shared_from_this(), id = seat.id()](error_code ec, const Reply& r) {
            if (ec || r.is_error() || (r.type == Reply::Type::integer && r.integer < 0)) {
                if (ec || r.is_error()) {
                    log_failure("publishing frames", ec, r);
                }
                // Redis lost the stream (a restart) or missed a publish: seed it whole.
                std::lock_guard lock(self->mu_);
                self->owned_[id].epoch.clear();
            }
        });
}

void Node::preview(
    hub::Seat& seat, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) {
    // Pub/sub only: lossy by nature (a subscriber reconnecting, a full output buffer), the loss
    // found by the offset on the other side; never in the stream.
    {
        std::lock_guard lock(mu_);
        if (auto it = owned_.find(seat.id()); it != owned_.end() && !it->second.watched) {
            return; // no node follows it (the last tick's PUBSUB NUMSUB)
        }
    }
    std::vector<std::string> args{
        "PUBLISH", key(seat.id(), "c"), preview_notice(seat.epoch(), pos, offset, ev)};
    cmd_->async_command(std::move(args), [](error_code, const Reply&) {});
}

void Node::turn_state(hub::Seat& seat, std::uint64_t before, const std::string& data) {
    std::vector<std::string> args{
        "PUBLISH",
        key(seat.id(), "c"),
        "t " + seat.epoch() + " " + std::to_string(before) + "\n" + data};
    cmd_->async_command(std::move(args), [](error_code, const Reply&) {});
}

} // namespace sluice::cluster
