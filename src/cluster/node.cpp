// Cluster node: the owner's publish, seed, lease and registry; mirrors' subscribe, read, follow.
#include <sluice/cluster/node.hpp>
#include <sluice/conversation/frame.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <fstream>
#include <random>

namespace sluice::cluster {

namespace net = boost::asio;
namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;

namespace {

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

// Seeds a seat's stream whole (a new epoch, or Redis lost it): KEYS stream, head, channel;
// ARGV epoch, first, then (frame, opens) pairs. Replaces what was there; tells the followers.
constexpr const char* SEED_LUA = R"lua(
redis.call('DEL', KEYS[1])
local first = tonumber(ARGV[2])
local n = (#ARGV - 2) / 2
for i = 0, n - 1 do
  redis.call('XADD', KEYS[1], string.format('%d-1', first + i), 'f', ARGV[3 + 2 * i],
             'o', ARGV[4 + 2 * i])
end
redis.call('HSET', KEYS[2], 'epoch', ARGV[1], 'end', string.format('%d', first + n))
redis.call('PUBLISH', KEYS[3], 'r ' .. ARGV[1])
return first + n
)lua";

// Appends durable frames: KEYS stream, head, channel; ARGV epoch, first, front, then pairs.
// -1 when the head is of another epoch or the frames do not follow it (the owner seeds
// instead); frames already in the stream are skipped (a retried publish). One PUBLISH carries
// the frames to the followers; the stream is trimmed to the window front.
constexpr const char* APPEND_LUA = R"lua(
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[1] then return -1 end
local e = tonumber(redis.call('HGET', KEYS[2], 'end'))
local first = tonumber(ARGV[2])
if first > e then return -1 end
local n = (#ARGV - 3) / 2
local parts = {}
for i = 0, n - 1 do
  local seq = first + i
  if seq >= e then
    redis.call('XADD', KEYS[1], string.format('%d-1', seq), 'f', ARGV[4 + 2 * i],
               'o', ARGV[5 + 2 * i])
    e = seq + 1
  end
  parts[#parts + 1] = ARGV[5 + 2 * i] .. ARGV[4 + 2 * i]
end
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[3])
redis.call('HSET', KEYS[2], 'end', string.format('%d', e))
local notice = 'f ' .. ARGV[1] .. ' ' .. ARGV[2] .. '\n' .. table.concat(parts, '\n')
redis.call('PUBLISH', KEYS[3], notice)
return e
)lua";

// Reads a seat's head and stream at once: KEYS stream, head; ARGV the first id ('-': all).
constexpr const char* READ_LUA = R"lua(
local ep = redis.call('HGET', KEYS[2], 'epoch')
if not ep then return {} end
return {ep, redis.call('HGET', KEYS[2], 'end'), redis.call('XRANGE', KEYS[1], ARGV[1], '+')}
)lua";

// Claims or renews a seat's lease and lists it: KEYS lease, registry; ARGV node, ttl, id, entry.
constexpr const char* LEASE_LUA = R"lua(
local o = redis.call('GET', KEYS[1])
if o and o ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
return 1
)lua";

// The registry with each seat's lease holder: KEYS registry; ARGV key prefix of a seat.
constexpr const char* LIST_LUA = R"lua(
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  out[#out + 1] = all[i]
  out[#out + 1] = all[i + 1]
  out[#out + 1] = redis.call('GET', ARGV[1] .. all[i] .. ':owner') or ''
end
return out
)lua";

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

hub::SeatState parse_state(std::string_view s) {
    for (auto st :
         {hub::SeatState::idle,
          hub::SeatState::running,
          hub::SeatState::queued,
          hub::SeatState::unavailable,
          hub::SeatState::degraded,
          hub::SeatState::waiting}) {
        if (s == hub::state_name(st)) {
            return st;
        }
    }
    return hub::SeatState::idle;
}

std::string entry_json(const hub::SeatSummary& s, const std::string& node) {
    json::object o;
    o["node"] = node;
    o["name"] = s.name;
    o["agent"] = s.agent;
    o["epoch"] = s.epoch;
    o["state"] = hub::state_name(s.state);
    o["degraded"] = s.degraded;
    o["reason"] = s.reason;
    o["turns"] = s.turns;
    o["frames"] = s.frames;
    return json::serialize(o);
}

std::string str_of(const json::object& o, std::string_view k) {
    if (const auto* v = o.if_contains(k); v != nullptr && v->is_string()) {
        return std::string(v->as_string());
    }
    return {};
}

std::uint64_t num_of(const json::object& o, std::string_view k) {
    if (const auto* v = o.if_contains(k); v != nullptr && v->is_number()) {
        return v->to_number<std::uint64_t>();
    }
    return 0;
}

std::uint64_t to_u64(const std::string& s) {
    try {
        return std::stoull(s);
    } catch (const std::exception&) {
        return 0;
    }
}

// Frames of an XRANGE reply, with the seq of the first and whether they are contiguous.
struct Entries {
    std::vector<hub::MirrorFrame> frames;
    std::uint64_t first{};
    bool contiguous{true};
};

Entries parse_entries(const Reply& r) {
    Entries out;
    for (const auto& e : r.elements) {
        if (e.elements.size() != 2) {
            continue;
        }
        const auto seq = to_u64(e.elements[0].str.substr(0, e.elements[0].str.find('-')));
        if (out.frames.empty()) {
            out.first = seq;
        } else if (seq != out.first + out.frames.size()) {
            out.contiguous = false;
        }
        hub::MirrorFrame mf;
        const auto& fv = e.elements[1].elements;
        for (std::size_t i = 0; i + 1 < fv.size(); i += 2) {
            if (fv[i].str == "f") {
                if (auto f = Frame::parse(fv[i + 1].str)) {
                    mf.frame = *f;
                }
            } else if (fv[i].str == "o") {
                mf.opens = fv[i + 1].str == "1";
            }
        }
        if (!mf.frame) {
            out.contiguous = false; // not a frame: never served
            continue;
        }
        out.frames.push_back(std::move(mf));
    }
    return out;
}

void log_failure(const char* what, const error_code& ec, const Reply& r) {
    if (ec) {
        spdlog::warn("cluster: {}: {}", what, ec.message());
    } else if (r.is_error()) {
        spdlog::warn("cluster: {}: {}", what, r.str);
    }
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
    cmd_ = redis::Client::create(io, o);
    sub_ = redis::Client::create(io, o);
}

Node::~Node() = default;

std::string Node::key(const std::string& seat, const char* what) const {
    return cfg_.prefix + "seat:" + seat + ":" + what;
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
            net::post(self->strand_, [self] {
                std::vector<std::shared_ptr<hub::Seat>> seats;
                {
                    std::lock_guard lock(self->mu_);
                    for (auto& [id, w] : self->followed_) {
                        if (auto s = w.lock()) {
                            seats.push_back(std::move(s));
                        }
                    }
                }
                for (const auto& s : seats) {
                    self->sync(s, /*full=*/false);
                }
            });
        }
    });
    cmd_->on_connect([weak = weak_from_this()] {
        // A new connection may be to a Redis that lost everything: seed every stream again.
        if (auto self = weak.lock()) {
            std::lock_guard lock(self->mu_);
            for (auto& [id, o] : self->owned_) {
                o.epoch.clear();
            }
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
        return "Redis at " + cfg_.url.display() + " does not answer (waited "
               + std::to_string(timeout.count()) + " ms)";
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
        args.emplace_back(w.at(p)->json());
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
        args.emplace_back(w.at(p)->json());
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

void Node::turn_state(hub::Seat& seat, std::uint64_t before, const std::string& data) {
    std::vector<std::string> args{
        "PUBLISH",
        key(seat.id(), "c"),
        "t " + seat.epoch() + " " + std::to_string(before) + "\n" + data};
    cmd_->async_command(std::move(args), [](error_code, const Reply&) {});
}

// ---- viewer --------------------------------------------------------------------------------

void Node::mirror_wanted(const std::shared_ptr<hub::Seat>& seat) {
    {
        std::lock_guard lock(mu_);
        followed_[seat->id()] = seat;
    }
    net::co_spawn(strand_, follow(seat), net::detached);
}

net::awaitable<void> Node::follow(std::shared_ptr<hub::Seat> seat) {
    // Subscribe first, then read: a notice published in between is applied after the read
    // (or found a duplicate), never missed.
    auto ec = co_await sub_->subscribe(key(seat->id(), "c"));
    if (ec) {
        spdlog::warn("cluster: cannot follow seat {}: {}", seat->id(), ec.message());
    }
    sync(seat, /*full=*/true);
}

void Node::sync(const std::shared_ptr<hub::Seat>& seat, bool full) {
    // Read on the seat's strand what the window needs: everything, or from its end.
    net::post(seat->strand(), [self = shared_from_this(), seat, full] {
        const bool whole = full || !seat->mirror_ready();
        const std::string from = whole ? "-" : std::to_string(seat->window().end());
        const std::string epoch = seat->epoch();
        std::vector<std::string> args{
            "EVAL", READ_LUA, "2", self->key(seat->id(), "s"), self->key(seat->id(), "m"), from};
        self->cmd_->async_command(
            std::move(args), [self, seat, whole, epoch](error_code ec, const Reply& r) {
                if (ec || r.is_error() || r.elements.size() != 3) {
                    if (ec || r.is_error()) {
                        log_failure("reading a seat's stream", ec, r);
                    }
                    return; // no head yet (the owner seeds it): the next tick reads again
                }
                auto e = parse_entries(r.elements[2]);
                const auto end = to_u64(r.elements[1].str);
                const std::string ep = r.elements[0].str;
                net::post(seat->strand(), [self, seat, whole, e = std::move(e), end, ep]() mutable {
                    if (whole || ep != seat->epoch() || !e.contiguous) {
                        if (!whole) {
                            self->sync(seat, /*full=*/true);
                            return;
                        }
                        const auto first = end - std::min<std::uint64_t>(end, e.frames.size());
                        seat->mirror_reset(ep, first, std::move(e.frames));
                        return;
                    }
                    if (e.frames.empty()) {
                        return;
                    }
                    if (!seat->mirror_append(ep, e.first, std::move(e.frames))) {
                        self->sync(seat, /*full=*/true); // trimmed past: read it whole
                    }
                });
            });
    });
}

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
    const auto id = channel.substr(head.size(), channel.size() - head.size() - 2);
    std::shared_ptr<hub::Seat> seat;
    {
        std::lock_guard lock(mu_);
        if (auto it = followed_.find(id); it != followed_.end()) {
            seat = it->second.lock();
        }
    }
    if (!seat) {
        return;
    }
    const auto nl = payload.find('\n');
    const std::string line = payload.substr(0, nl);
    const char kind = payload[0];
    if (kind == 'x') {
        net::post(strand_, [self = shared_from_this(), id] { self->drop_mirror(id); });
        return;
    }
    if (kind == 'r') {
        sync(seat, /*full=*/true); // a new epoch, or the stream seeded again
        return;
    }
    const auto sp1 = line.find(' ');
    const auto sp2 = line.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos || nl == std::string::npos) {
        return;
    }
    std::string epoch = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const auto pos = to_u64(line.substr(sp2 + 1));
    if (kind == 't') {
        net::post(seat->strand(), [seat, pos, data = payload.substr(nl + 1)]() mutable {
            seat->mirror_turn_state(pos, std::move(data));
        });
        return;
    }
    if (kind != 'f') {
        return;
    }
    std::vector<hub::MirrorFrame> frames;
    std::size_t at = nl + 1;
    bool ok = true;
    while (at < payload.size()) {
        auto stop = payload.find('\n', at);
        if (stop == std::string::npos) {
            stop = payload.size();
        }
        hub::MirrorFrame mf;
        mf.opens = payload[at] == '1';
        if (auto f = Frame::parse(std::string_view(payload).substr(at + 1, stop - at - 1))) {
            mf.frame = *f;
            frames.push_back(std::move(mf));
        } else {
            ok = false;
        }
        at = stop + 1;
    }
    net::post(
        seat->strand(),
        [self = shared_from_this(),
         seat,
         epoch = std::move(epoch),
         pos,
         ok,
         frames = std::move(frames)]() mutable {
            if (!seat->mirror_ready()) {
                return; // the read after the subscribe brings them
            }
            if (!ok || !seat->mirror_append(epoch, pos, std::move(frames))) {
                self->sync(seat, epoch != seat->epoch()); // a hole: read from the end
            }
        });
}

// ---- forwarded commands ---------------------------------------------------------------------

struct Node::Forward {
    explicit Forward(const net::strand<net::io_context::executor_type>& s)
        : timer(s) {}

    hub::ForwardDone done;
    net::steady_timer timer;
};

void Node::forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done) {
    net::dispatch(
        strand_,
        [self = shared_from_this(), owner, req = std::move(req), done = std::move(done)]() mutable {
            const auto rid = ++self->next_rid_;
            auto f = std::make_shared<Forward>(self->strand_);
            f->done = std::move(done);
            self->forwards_[rid] = f;
            f->timer.expires_after(FORWARD_TIMEOUT);
            f->timer.async_wait([self, rid, owner](error_code ec) {
                if (!ec) {
                    self->finish_forward(
                        rid, 0, "the owner node " + owner + " did not answer within 5 s");
                }
            });
            json::object msg{
                {"rid", rid},
                {"from", self->id_},
                {"method", req.method},
                {"target", req.target},
                {"body", req.body}};
            std::vector<std::string> args{
                "PUBLISH", self->cfg_.prefix + "node:" + owner, json::serialize(msg)};
            self->cmd_->async_command(
                std::move(args), [self, rid, owner](error_code ec, const Reply& r) {
                    std::string why;
                    if (ec) {
                        why = "Redis: " + ec.message();
                    } else if (r.is_error()) {
                        why = "Redis: " + r.str;
                    } else if (r.integer == 0) {
                        why = "the owner node " + owner + " is gone";
                    }
                    if (!why.empty()) {
                        net::post(self->strand_, [self, rid, why = std::move(why)]() mutable {
                            self->finish_forward(rid, 0, std::move(why));
                        });
                    }
                });
        });
}

void Node::finish_forward(std::uint64_t rid, unsigned status, std::string body) {
    auto it = forwards_.find(rid);
    if (it == forwards_.end()) {
        return; // answered already (or timed out)
    }
    auto f = std::move(it->second);
    forwards_.erase(it);
    f->timer.cancel();
    f->done(status, std::move(body));
}

void Node::on_node_message(const std::string& payload) {
    boost::system::error_code jec;
    auto v = json::parse(payload, jec);
    if (jec || !v.is_object()) {
        return;
    }
    const auto& o = v.as_object();
    const auto rid = num_of(o, "rid");
    if (o.contains("status")) {
        net::post(
            strand_,
            [self = shared_from_this(),
             rid,
             status = num_of(o, "status"),
             body = str_of(o, "body")]() mutable {
                self->finish_forward(rid, static_cast<unsigned>(status), std::move(body));
            });
        return;
    }
    const auto from = str_of(o, "from");
    if (!on_forwarded_ || from.empty()) {
        return;
    }
    hub::ForwardedRequest req{str_of(o, "method"), str_of(o, "target"), str_of(o, "body")};
    on_forwarded_(
        std::move(req), [self = shared_from_this(), from, rid](unsigned status, std::string body) {
            json::object answer{{"rid", rid}, {"status", status}, {"body", std::move(body)}};
            std::vector<std::string> args{
                "PUBLISH", self->cfg_.prefix + "node:" + from, json::serialize(answer)};
            self->cmd_->async_command(std::move(args), [](error_code, const Reply&) {});
        });
}

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
    if (!cmd_->connected()) {
        co_return;
    }
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
        auto [ec, r] = co_await cmd_->command(std::move(args));
        if (!ec && r.type == Reply::Type::integer && r.integer == 0) {
            spdlog::warn("cluster: seat {} is leased by another node", seat->id());
        }
        bool seeded = false;
        {
            std::lock_guard lock(mu_);
            seeded = !owned_[seat->id()].epoch.empty();
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
    // Seats this node dropped: out of the registry, their keys gone.
    std::vector<std::string> gone;
    {
        std::lock_guard lock(mu_);
        for (auto it = owned_.begin(); it != owned_.end();) {
            if (local.contains(it->first)) {
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
    // Other nodes' seats: mirrors, their heads, and a position check for the followed ones.
    std::vector<std::string> list{"EVAL", LIST_LUA, "1", registry, cfg_.prefix + "seat:"};
    auto [ec, r] = co_await cmd_->command(std::move(list));
    if (ec || r.type != Reply::Type::array) {
        co_return;
    }
    std::set<std::string> remote;
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
        if (node == id_) {
            continue; // listed by this node's earlier run, not restored now
        }
        remote.insert(id);
        hub::SeatSpec spec;
        spec.id = id;
        spec.name = str_of(o, "name");
        spec.agent = str_of(o, "agent");
        spec.epoch = str_of(o, "epoch");
        auto seat = hub_->add_mirror(std::move(spec), node);
        if (!seat->mirror()) {
            continue;
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
            why = "its owner node " + node + " is gone (the seat comes back with it)";
        }
        net::post(seat->strand(), [seat, head = std::move(head), why = std::move(why)]() mutable {
            seat->mirror_head(std::move(head), std::move(why));
        });
        bool followed = false;
        {
            std::lock_guard lock(mu_);
            followed = followed_.contains(id);
        }
        if (followed) {
            sync(seat, /*full=*/false); // the position check: a lost notice shows here
        }
    }
    // A mirror goes when its seat has been out of the registry for MIRROR_MISSING_TICKS ticks
    // (not at once: a Redis that restarted empty lists nothing until the owners list again).
    for (const auto& seat : hub_->list()) {
        if (!seat->mirror()) {
            continue;
        }
        if (remote.contains(seat->id())) {
            missing_.erase(seat->id());
        } else if (++missing_[seat->id()] >= MIRROR_MISSING_TICKS) {
            drop_mirror(seat->id());
        }
    }
}

void Node::drop_mirror(const std::string& id) {
    {
        std::lock_guard lock(mu_);
        followed_.erase(id);
    }
    missing_.erase(id);
    sub_->unsubscribe(key(id, "c"));
    hub_->remove_mirror(id);
}

} // namespace sluice::cluster
