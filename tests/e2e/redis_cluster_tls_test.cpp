// End-to-end test of `sluice serve --redis rediss://…`: nodes on a TLS redis-server, verified
// against a throwaway CA made by the openssl CLI; an untrusted server refused at start.
#include "e2e/redis_cluster.hpp"
#include "support/test_certs.hpp"

#include <gtest/gtest.h>

namespace {

using namespace sluice::test;
using namespace std::chrono_literals;

std::vector<std::string>
tls_node_args(const TempDir& dir, const RedisProcess& redis, const std::string& ca) {
    auto a = node_args(dir, redis.tls_url());
    a.insert(a.end(), {"--redis-ca", ca});
    return a;
}

TEST(RedisClusterTls, NodesShareASeatOverTlsAndRefuseAnUntrustedServer) {
    SKIP_WITHOUT_REDIS();
    TempDir certs;
    const auto server_pem =
        make_self_signed(certs.file("server.pem"), certs.file("server-key.pem"), "IP:127.0.0.1");
    const auto other_pem =
        make_self_signed(certs.file("other.pem"), certs.file("other-key.pem"), "IP:127.0.0.1");
    if (server_pem.empty() || other_pem.empty()) {
        GTEST_SKIP() << "the openssl CLI could not make a certificate";
    }
    RedisProcess redis(
        RedisTls{certs.file("server.pem"), certs.file("server-key.pem"), certs.file("server.pem")});

    // A CA that did not sign the server's certificate: serve says why and exits 2.
    {
        TempDir dx;
        SluiceProcess x(
            tls_node_args(dx, redis, certs.file("other.pem")), /*wait_for_listen=*/false);
        EXPECT_EQ(x.wait(20s), 2) << x.output();
        EXPECT_EQ(x.output().find("listening on"), std::string::npos);
        EXPECT_NE(x.output().find("certificate verify failed"), std::string::npos) << x.output();
    }

    // The right CA: two nodes, a seat on A served on B from the stream over TLS.
    TempDir da, db;
    SluiceProcess a(tls_node_args(da, redis, certs.file("server.pem")));
    SluiceProcess b(tls_node_args(db, redis, certs.file("server.pem")));
    const auto seat = new_seat(a);
    ASSERT_FALSE(seat.empty());
    SseClient on_a(events_url(a, seat));
    // Attached before the turn: a viewer that joins after a turn ended sees its frames, not its
    // `ended` state (pace 0 ends a turn in milliseconds).
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto t1 = send(a, seat, "over TLS");
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }))
        << a.output();
    ASSERT_TRUE(eventually([&] { return lists(b, seat); })) << b.output();
    SseClient on_b(events_url(b, seat));
    const auto history = frames_seen(on_a.events());
    ASSERT_FALSE(history.empty());
    EXPECT_TRUE(on_b.wait_for([&](const Events& ev) { return frames_seen(ev) == history; }))
        << "B: " << b.output() << "\nA: " << a.output();
    // The frames really went through this TLS server: the seat's stream is there.
    EXPECT_NE(redis.cli("EXISTS sluice:seat:" + seat + ":s").find('1'), std::string::npos);
}

TEST(RedisClusterTls, RedisCaFlagNeedsARedissUrl) {
    TempDir dir;
    auto args = node_args(dir, "redis://127.0.0.1:1");
    args.insert(args.end(), {"--redis-ca", dir.file("ca.pem")});
    SluiceProcess x(args, /*wait_for_listen=*/false);
    EXPECT_EQ(x.wait(15s), 2);
    EXPECT_EQ(x.output().find("listening on"), std::string::npos);
}

} // namespace
