// Cluster node, private: commands forwarded to a seat's owner over Redis pub/sub, and answers.
#pragma once

#include "node_context.hpp"

#include <sluice/hub/forward.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace sluice::cluster::detail {

/// A node's forwarded commands: the ones it sends to other nodes (each waits for its answer on
/// this node's channel, or FORWARD_TIMEOUT) and the ones it is sent (run by `on_forwarded`,
/// answered on the sender's channel).
///
/// @par Thread safety
/// `forward` from any thread; `received` from the pub/sub connection's callbacks; the pending
/// commands are confined to the node's strand. `on_forwarded` before the node starts.
class Forwards {
public:
    /// The forwards of the node `ctx` describes.
    explicit Forwards(NodeContext ctx);

    /// Commands forwarded to this node go to `fn` (see Node::on_forwarded).
    void on_forwarded(std::function<void(hub::ForwardedRequest, hub::ForwardDone)> fn) {
        on_forwarded_ = std::move(fn);
    }

    /// Sends `req` to `owner` (see Node::forward); `done` runs on the node's strand.
    void forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done);

    /// A message on this node's channel (other than a `watch`): an answer to a command this
    /// node forwarded, or a command forwarded to it.
    void received(const boost::json::object& o);

private:
    struct Forward;

    void finish(std::uint64_t rid, unsigned status, std::string body); // on the strand

    NodeContext ctx_;
    std::function<void(hub::ForwardedRequest, hub::ForwardDone)> on_forwarded_;
    std::map<std::uint64_t, std::shared_ptr<Forward>> forwards_; // on the strand
    std::uint64_t next_rid_{0};                                  // on the strand
};

} // namespace sluice::cluster::detail
