// The scale-out flags of `sluice serve` and the cluster node built from them.
#include "cluster_flags.hpp"

#include <sluice/redis/resp.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace sluice::app {

void add_cluster_flags(CLI::App& app, ClusterFlags& flags) {
    app.add_option(
        "--redis",
        flags.redis,
        "scale out on Redis Streams: redis://host:port, rediss://host:port (TLS) or "
        "unix:///path (any node serves any seat)");
    app.add_option(
        "--redis-ca",
        flags.redis_ca,
        "rediss://: PEM file of the CAs the Redis server's certificate must chain to (default: "
        "the system's store); the certificate must also name the URL's host or IP");
    app.add_option(
        "--redis-cert",
        flags.redis_cert,
        "rediss://: PEM client certificate chain, for a Redis with tls-auth-clients yes");
    app.add_option("--redis-key", flags.redis_key, "rediss://: PEM private key of --redis-cert");
    app.add_option(
        "--shared-seats",
        flags.shared_seats,
        "with --redis: the seats' folders are on storage every node mounts at DIR; a node takes "
        "a seat over when its owner's lease runs out");
    app.add_option(
           "--redis-lease-ms",
           flags.redis_lease_ms,
           "with --redis: a seat's lease, renewed ten times within it (default 10000)")
        ->check(CLI::Range(500, 600'000));
}

std::optional<std::shared_ptr<cluster::Node>> cluster_node(
    const ClusterFlags& flags,
    const std::string& data_dir,
    boost::asio::io_context& io,
    hub::HubConfig& hc) {
    if (flags.redis.empty()) {
        if (!flags.shared_seats.empty()) {
            std::fprintf(
                stderr, "sluice serve: --shared-seats needs --redis (the leases are there)\n");
            return std::nullopt;
        }
        return nullptr;
    }
    auto url = redis::parse_url(flags.redis);
    if (!url) {
        std::fprintf(
            stderr, "sluice serve: --redis %s: %s\n", flags.redis.c_str(), url.error().c_str());
        return std::nullopt;
    }
    if (url->kind != redis::Url::Kind::tls
        && !(flags.redis_ca.empty() && flags.redis_cert.empty() && flags.redis_key.empty())) {
        std::fprintf(
            stderr, "sluice serve: --redis-ca/--redis-cert/--redis-key need a rediss:// URL\n");
        return std::nullopt;
    }
    cluster::NodeConfig nc;
    nc.url = *url;
    nc.data_dir = data_dir;
    nc.tls_ca_file = flags.redis_ca;
    nc.tls_cert_file = flags.redis_cert;
    nc.tls_key_file = flags.redis_key;
    nc.lease = std::chrono::milliseconds(flags.redis_lease_ms);
    nc.tick = std::min(std::chrono::milliseconds(1000), nc.lease / 10); // renewed 10 times
    nc.takeover = !flags.shared_seats.empty();
    std::shared_ptr<cluster::Node> node;
    try {
        node = cluster::Node::create(io, std::move(nc));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sluice serve: --redis: %s\n", e.what());
        return std::nullopt;
    }
    if (!flags.shared_seats.empty()) {
        hc.seats_dir = flags.shared_seats;
    }
    hc.broker = node;
    return node;
}

std::optional<push::SharedPushConfig> cluster_push(const ClusterFlags& flags) {
    if (flags.redis.empty()) {
        return std::nullopt;
    }
    auto url = redis::parse_url(flags.redis);
    if (!url) {
        return std::nullopt;
    }
    push::SharedPushConfig c;
    c.url = *url;
    c.tls_ca_file = flags.redis_ca;
    c.tls_cert_file = flags.redis_cert;
    c.tls_key_file = flags.redis_key;
    return c;
}

} // namespace sluice::app
