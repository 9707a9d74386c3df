// Cluster node: commands forwarded to a seat's owner over Redis pub/sub, and their answers.
#include "node_detail.hpp"

#include <sluice/cluster/node.hpp>
#include <sluice/detail/net.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace sluice::cluster {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;
using namespace detail;

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
            if (owner == self->id_) {
                // A seat this node let go (takeover): nobody holds its lease yet. Never sent to
                // itself: it would come back here as a mirror's command again.
                done(0, "no node holds the seat's lease now (this node let it go); try again");
                return;
            }
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
    if (const auto watch = str_of(o, "watch"); !watch.empty()) {
        // A node follows one of this node's seats from now on: its previews go out at once,
        // not from the next tick's count.
        std::lock_guard lock(mu_);
        if (auto it = owned_.find(watch); it != owned_.end()) {
            it->second.watched = true;
        }
        return;
    }
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

} // namespace sluice::cluster
