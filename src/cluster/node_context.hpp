// Cluster node, private: what the node's parts (Forwards, Mirrors, Takeover) are given of it.
#pragma once

#include <sluice/cluster/node.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace sluice::cluster::detail {

/// The node's strand (its parts' state is confined to it).
using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

/// A seat's key or channel: `<prefix>seat:<seat>:<what>`.
inline std::string seat_key(const std::string& prefix, const std::string& seat, const char* what) {
    return prefix + "seat:" + seat + ":" + what;
}

/// The node's engine as its parts see it: references to what the Node owns (it outlives its
/// parts), and `hold`, which keeps the node (and so every part) alive while a callback waits.
///
/// @par Thread safety
/// The references are set once; what they name keeps its own rules (`mu` guards the node's
/// maps shared with seats' strands, the rest is confined to `strand`).
struct NodeContext {
    Strand& strand;                              ///< the node's strand
    const NodeConfig& cfg;                       ///< the node's settings
    const std::string& id;                       ///< the node's id
    hub::Hub* const& hub;                        ///< the hub (set by Node::start)
    const std::shared_ptr<redis::Client>& cmd;   ///< the command connection
    const std::shared_ptr<redis::Client>& sub;   ///< the pub/sub connection
    std::mutex& mu;                              ///< guards the maps seats' strands read
    std::function<std::shared_ptr<void>()> hold; ///< a strong reference to the node

    /// A seat's key or channel: `<prefix>seat:<seat>:<what>`.
    [[nodiscard]] std::string key(const std::string& seat, const char* what) const {
        return seat_key(cfg.prefix, seat, what);
    }
};

} // namespace sluice::cluster::detail
