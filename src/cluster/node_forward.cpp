// Cluster node: commands forwarded to a seat's owner over Redis pub/sub, and their answers.
#include "node_forward.hpp"

#include "node_detail.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace sluice::cluster::detail {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;

struct Forwards::Forward {
    explicit Forward(const Strand& s)
        : timer(s) {}

    hub::ForwardDone done;
    net::steady_timer timer;
};

Forwards::Forwards(NodeContext ctx)
    : ctx_(std::move(ctx)) {
}

void Forwards::forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done) {
    net::dispatch(
        ctx_.strand,
        [this, life = ctx_.hold(), owner, req = std::move(req), done = std::move(done)]() mutable {
            if (owner == ctx_.id) {
                // A seat this node let go (takeover): nobody holds its lease yet. Never sent to
                // itself: it would come back here as a mirror's command again.
                done(0, "no node holds the seat's lease now (this node let it go); try again");
                return;
            }
            const auto rid = ++next_rid_;
            auto f = std::make_shared<Forward>(ctx_.strand);
            f->done = std::move(done);
            forwards_[rid] = f;
            f->timer.expires_after(FORWARD_TIMEOUT);
            f->timer.async_wait([this, life, rid, owner](error_code ec) {
                if (!ec) {
                    finish(rid, 0, "the owner node " + owner + " did not answer within 5 s");
                }
            });
            json::object msg{
                {"rid", rid},
                {"from", ctx_.id},
                {"method", req.method},
                {"target", req.target},
                {"body", req.body}};
            std::vector<std::string> args{
                "PUBLISH", ctx_.cfg.prefix + "node:" + owner, json::serialize(msg)};
            ctx_.cmd->async_command(
                std::move(args), [this, life, rid, owner](error_code ec, const Reply& r) {
                    std::string why;
                    if (ec) {
                        why = "Redis: " + ec.message();
                    } else if (r.is_error()) {
                        why = "Redis: " + r.str;
                    } else if (r.integer == 0) {
                        why = "the owner node " + owner + " is gone";
                    }
                    if (!why.empty()) {
                        net::post(ctx_.strand, [this, life, rid, why = std::move(why)]() mutable {
                            finish(rid, 0, std::move(why));
                        });
                    }
                });
        });
}

void Forwards::finish(std::uint64_t rid, unsigned status, std::string body) {
    auto it = forwards_.find(rid);
    if (it == forwards_.end()) {
        return; // answered already (or timed out)
    }
    auto f = std::move(it->second);
    forwards_.erase(it);
    f->timer.cancel();
    f->done(status, std::move(body));
}

void Forwards::received(const json::object& o) {
    const auto rid = num_of(o, "rid");
    if (o.contains("status")) {
        net::post(
            ctx_.strand,
            [this,
             life = ctx_.hold(),
             rid,
             status = num_of(o, "status"),
             body = str_of(o, "body")]() mutable {
                finish(rid, static_cast<unsigned>(status), std::move(body));
            });
        return;
    }
    const auto from = str_of(o, "from");
    if (!on_forwarded_ || from.empty()) {
        return;
    }
    hub::ForwardedRequest req{str_of(o, "method"), str_of(o, "target"), str_of(o, "body")};
    on_forwarded_(
        std::move(req), [this, life = ctx_.hold(), from, rid](unsigned status, std::string body) {
            json::object answer{{"rid", rid}, {"status", status}, {"body", std::move(body)}};
            std::vector<std::string> args{
                "PUBLISH", ctx_.cfg.prefix + "node:" + from, json::serialize(answer)};
            ctx_.cmd->async_command(std::move(args), [](error_code, const Reply&) {});
        });
}

} // namespace sluice::cluster::detail
