// Cluster node, viewer side: mirrors follow other nodes' seats (subscribe, read, notices).
#include "node_detail.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/cluster/node.hpp>
#include <sluice/conversation/frame.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

namespace sluice::cluster {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;
using namespace detail;

namespace {

// Whether `seat` is (still) a mirror that has had its first reset.
bool ready(hub::Seat& seat) {
    const auto* mirror = MirrorSource::of(seat);
    return mirror != nullptr && mirror->ready();
}

} // namespace

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
    // The owner publishes previews only while a node follows: it is told at once.
    std::vector<std::string> watch{
        "PUBLISH",
        cfg_.prefix + "node:" + seat->owner(),
        json::serialize(json::object{{"watch", seat->id()}})};
    cmd_->async_command(std::move(watch), [](error_code, const Reply&) {});
    sync(seat, /*full=*/true);
}

void Node::sync(const std::shared_ptr<hub::Seat>& seat, bool full) {
    // Read on the seat's strand what the window needs: everything, or from its end.
    net::post(seat->strand(), [self = shared_from_this(), seat, full] {
        const bool whole = full || !ready(*seat);
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
                    auto* mirror = MirrorSource::of(*seat);
                    if (mirror == nullptr) {
                        return; // not a mirror any more: hosted here now
                    }
                    if (whole || ep != seat->epoch() || !e.contiguous) {
                        if (!whole) {
                            self->sync(seat, /*full=*/true);
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
        [self = shared_from_this(),
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
                self->sync(seat, epoch != seat->epoch()); // a hole: read from the end
            }
        });
}

} // namespace sluice::cluster
