// The scale-out flags of `sluice serve` (--redis and its companions) and the cluster node built
// from them.
#pragma once

#include <sluice/cluster/node.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/push/sender.hpp>

#include <boost/asio/io_context.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sluice::app {

/// The values of the scale-out flags.
struct ClusterFlags {
    std::string redis;        ///< --redis URL: scale-out on Redis Streams (empty: single node)
    std::string redis_ca;     ///< --redis-ca: CAs for rediss:// (empty: the system's store)
    std::string redis_cert;   ///< --redis-cert: client certificate for rediss://
    std::string redis_key;    ///< --redis-key: its key
    std::string shared_seats; ///< --shared-seats DIR: seats' folders, shared
    std::uint64_t redis_lease_ms{10'000}; ///< --redis-lease-ms: a seat's lease TTL
};

/// Declares --redis, --redis-ca, --redis-cert, --redis-key, --shared-seats and --redis-lease-ms
/// on `app`, writing into `flags` (which must outlive the parse).
void add_cluster_flags(CLI::App& app, ClusterFlags& flags);

/// The cluster node the flags ask for, made on `io` and set as `hc`'s broker (with
/// --shared-seats, `hc`'s seats folder too): nullptr without --redis; nullopt, after saying why
/// on stderr, when the flags do not go together or the TLS files cannot be loaded.
std::optional<std::shared_ptr<cluster::Node>> cluster_node(
    const ClusterFlags& flags,
    const std::string& data_dir,
    boost::asio::io_context& io,
    hub::HubConfig& hc);

/// With --redis, where the nodes share their Web Push key and subscriptions (the cluster's
/// Redis, its TLS files); nullopt without --redis or with a URL that is not one (cluster_node
/// says why).
std::optional<push::SharedPushConfig> cluster_push(const ClusterFlags& flags);

} // namespace sluice::app
