// Cluster node, viewer side: mirrors follow other nodes' seats (subscribe, read, notices).
#include "node_mirror.hpp"

#include "node_detail.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/conversation/frame.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

namespace sluice::cluster::detail {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;

namespace {

// Whether `seat` is (still) a mirror that has had its first reset.
bool ready(hub::Seat& seat) {
    const auto* mirror = MirrorSource::of(seat);
    return mirror != nullptr && mirror->ready();
}

} // namespace

Mirrors::Mirrors(NodeContext ctx, Dropped dropped)
    : ctx_(std::move(ctx))
    , dropped_(std::move(dropped)) {
}

void Mirrors::wanted(const std::shared_ptr<hub::Seat>& seat) {
    {
        std::lock_guard lock(ctx_.mu);
        followed_[seat->id()] = seat;
    }
    net::co_spawn(ctx_.strand, follow(seat), net::detached);
}

bool Mirrors::followed(const std::string& id) {
    std::lock_guard lock(ctx_.mu);
    return followed_.contains(id);
}

void Mirrors::sync_followed() {
    std::vector<std::shared_ptr<hub::Seat>> seats;
    {
        std::lock_guard lock(ctx_.mu);
        for (auto& [id, w] : followed_) {
            if (auto s = w.lock()) {
                seats.push_back(std::move(s));
            }
        }
    }
    for (const auto& s : seats) {
        sync(s, /*full=*/false);
    }
}

net::awaitable<void> Mirrors::follow(std::shared_ptr<hub::Seat> seat) {
    // Subscribe first, then read: a notice published in between is applied after the read
    // (or found a duplicate), never missed.
    auto ec = co_await ctx_.sub->subscribe(ctx_.key(seat->id(), "c"));
    if (ec) {
        spdlog::warn("cluster: cannot follow seat {}: {}", seat->id(), ec.message());
    }
    // The owner publishes previews only while a node follows: it is told at once.
    std::vector<std::string> watch{
        "PUBLISH",
        ctx_.cfg.prefix + "node:" + seat->owner(),
        json::serialize(json::object{{"watch", seat->id()}})};
    ctx_.cmd->async_command(std::move(watch), [](error_code, const Reply&) {});
    sync(seat, /*full=*/true);
}

void Mirrors::sync(const std::shared_ptr<hub::Seat>& seat, bool full) {
    // Read on the seat's strand what the window needs: everything, or from its end.
    net::post(seat->strand(), [this, life = ctx_.hold(), seat, full] {
        const bool whole = full || !ready(*seat);
        const std::string from = whole ? "-" : std::to_string(seat->window().end());
        const std::string epoch = seat->epoch();
        std::vector<std::string> args{
            "EVAL", READ_LUA, "2", ctx_.key(seat->id(), "s"), ctx_.key(seat->id(), "m"), from};
        ctx_.cmd->async_command(
            std::move(args), [this, life, seat, whole, epoch](error_code ec, const Reply& r) {
                if (ec || r.is_error() || r.elements.size() != 3) {
                    if (ec || r.is_error()) {
                        log_failure("reading a seat's stream", ec, r);
                    }
                    return; // no head yet (the owner seeds it): the next tick reads again
                }
                auto e = parse_entries(r.elements[2]);
                const auto end = to_u64(r.elements[1].str);
                const std::string ep = r.elements[0].str;
                net::post(
                    seat->strand(), [this, life, seat, whole, e = std::move(e), end, ep]() mutable {
                        auto* mirror = MirrorSource::of(*seat);
                        if (mirror == nullptr) {
                            return; // not a mirror any more: hosted here now
                        }
                        if (whole || ep != seat->epoch() || !e.contiguous) {
                            if (!whole) {
                                sync(seat, /*full=*/true);
                                return;
                            }
                            const auto first = end - std::min<std::uint64_t>(end, e.frames.size());
                            mirror->reset(ep, first, std::move(e.frames));
                            return;
                        }
                        if (e.frames.empty()) {
                            return;
                        }
                        if (!mirror->append(ep, e.first, std::move(e.frames))) {
                            sync(seat, /*full=*/true); // trimmed past: read it whole
                        }
                    });
            });
    });
}

void Mirrors::notice(const std::string& id, const std::string& payload) {
    std::shared_ptr<hub::Seat> seat;
    {
        std::lock_guard lock(ctx_.mu);
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
        net::post(ctx_.strand, [this, life = ctx_.hold(), id] { drop(id); });
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
    if (kind == 'p') {
        const auto sp3 = line.find(' ', sp2 + 1);
        auto ev = parse_preview(std::string_view(payload).substr(nl + 1));
        if (sp3 == std::string::npos || !ev) {
            return;
        }
        net::post(
            seat->strand(),
            [seat,
             epoch = std::move(epoch),
             pos,
             offset = to_u64(line.substr(sp3 + 1)),
             ev = std::move(*ev)] {
                if (auto* mirror = MirrorSource::of(*seat)) {
                    mirror->preview(epoch, pos, offset, ev);
                }
            });
        return;
    }
    if (kind == 't') {
        net::post(seat->strand(), [seat, pos, data = payload.substr(nl + 1)]() mutable {
            if (auto* mirror = MirrorSource::of(*seat)) {
                mirror->turn_state(pos, std::move(data));
            }
        });
        return;
    }
    if (kind != 'f') {
        return;
    }
    std::vector<MirrorFrame> frames;
    std::size_t at = nl + 1;
    bool ok = true;
    const std::string_view body(payload);
    while (ok && at < body.size()) {
        // <opens digit><length>:<stored frame>
        const auto colon = body.find(':', at);
        const auto len = colon == std::string_view::npos
                             ? 0
                             : to_u64(std::string(body.substr(at + 1, colon - at - 1)));
        if (colon == std::string_view::npos || len > body.size() - colon - 1) {
            ok = false;
            break;
        }
        MirrorFrame mf;
        mf.opens = body[at] == '1';
        if (auto json = load_frame(body.substr(colon + 1, len))) {
            if (auto f = Frame::parse(*json)) {
                mf.frame = *f;
            }
        }
        if (!mf.frame) {
            ok = false; // not a frame: never served; the mirror reads the stream instead
            break;
        }
        frames.push_back(std::move(mf));
        at = colon + 1 + len;
    }
    net::post(
        seat->strand(),
        [this,
         life = ctx_.hold(),
         seat,
         epoch = std::move(epoch),
         pos,
         ok,
         frames = std::move(frames)]() mutable {
            auto* mirror = MirrorSource::of(*seat);
            if (mirror == nullptr || !mirror->ready()) {
                return; // the read after the subscribe brings them
            }
            if (!ok || !mirror->append(epoch, pos, std::move(frames))) {
                sync(seat, epoch != seat->epoch()); // a hole: read from the end
            }
        });
}

void Mirrors::hosted(const std::string& id) {
    missing_.erase(id);
    idle_.erase(id);
    ctx_.sub->unsubscribe(ctx_.key(id, "c"));
}

// A mirror goes when its seat has been out of the registry for MIRROR_MISSING_TICKS ticks
// (not at once: a Redis that restarted empty lists nothing until the owners list again).
void Mirrors::sweep_missing(const std::set<std::string>& remote) {
    for (const auto& seat : ctx_.hub->list()) {
        if (!seat->mirror()) {
            continue;
        }
        if (remote.contains(seat->id())) {
            missing_.erase(seat->id());
        } else if (++missing_[seat->id()] >= MIRROR_MISSING_TICKS) {
            drop(seat->id());
        }
    }
}

void Mirrors::unfollow_idle() {
    std::vector<std::shared_ptr<hub::Seat>> followed;
    {
        std::lock_guard lock(ctx_.mu);
        for (const auto& [id, w] : followed_) {
            if (auto seat = w.lock()) {
                followed.push_back(std::move(seat));
            }
        }
    }
    for (const auto& seat : followed) {
        if (seat->summary().subscribers > 0) {
            idle_.erase(seat->id());
            continue;
        }
        if (++idle_[seat->id()] < MIRROR_IDLE_TICKS) {
            continue;
        }
        // Unfollowed here first (its notices ignored from now on), then on the seat's strand:
        // a viewer that came meanwhile has it followed again at once.
        idle_.erase(seat->id());
        {
            std::lock_guard lock(ctx_.mu);
            followed_.erase(seat->id());
        }
        ctx_.sub->unsubscribe(ctx_.key(seat->id(), "c"));
        net::post(seat->strand(), [this, life = ctx_.hold(), seat] {
            if (auto* mirror = MirrorSource::of(*seat); mirror && !mirror->unfollow()) {
                wanted(seat);
            }
        });
    }
}

void Mirrors::drop(const std::string& id) {
    {
        std::lock_guard lock(ctx_.mu);
        followed_.erase(id);
    }
    missing_.erase(id);
    idle_.erase(id);
    dropped_(id); // no longer a seat this run let go
    ctx_.sub->unsubscribe(ctx_.key(id, "c"));
    ctx_.hub->remove_mirror(id);
}

} // namespace sluice::cluster::detail
