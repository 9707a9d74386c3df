// Tests of the Redis client against a real redis-server: pipelining, errors, pub/sub, reconnect.
#include "support/io_loop.hpp"
#include "support/redis_process.hpp"
#include "support/test_certs.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/redis/client.hpp>

#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

namespace sluice::redis {
namespace {

using test::IoLoop;
using test::RedisProcess;

ClientOptions options(const std::string& url) {
    ClientOptions o;
    o.url = *parse_url(url);
    o.backoff_min = std::chrono::milliseconds(10);
    o.backoff_max = std::chrono::milliseconds(100);
    return o;
}

std::shared_ptr<Client> connected(IoLoop& loop, const std::string& url) {
    auto c = Client::create(loop.context(), options(url));
    c->start();
    EXPECT_TRUE(loop.until([&] { return c->connected(); }));
    return c;
}

#define SKIP_WITHOUT_REDIS()                                                                       \
    if (!test::have_redis_server()) {                                                              \
        GTEST_SKIP() << "redis-server is not installed (scripts/install-deps)";                    \
    }

TEST(RedisClient, RunsPipelinedCommandsInOrder) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    IoLoop loop;
    auto c = connected(loop, redis.url());
    constexpr int N = 2000;
    std::vector<std::int64_t> got;
    for (int i = 0; i < N; ++i) {
        c->async_command({"INCR", "n"}, [&](boost::system::error_code ec, Reply r) {
            EXPECT_FALSE(ec);
            got.push_back(r.integer);
        });
    }
    ASSERT_TRUE(loop.until([&] { return got.size() == N; }));
    for (int i = 0; i < N; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], i + 1);
    }
    auto [ec, r] = loop.run(c->command({"GET", "n"}));
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.str, std::to_string(N));
    auto [ec2, bad] = loop.run(c->command({"NOSUCHCOMMAND"}));
    EXPECT_FALSE(ec2);
    EXPECT_TRUE(bad.is_error());
    c->stop();
}

TEST(RedisClient, SpeaksTcpToo) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis(/*tcp=*/true);
    IoLoop loop;
    auto c = connected(loop, redis.tcp_url());
    auto [ec, r] = loop.run(c->command({"PING"}));
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.str, "PONG");
    c->stop();
}

TEST(RedisClient, FailsCommandsWhileDisconnectedAndReconnects) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    IoLoop loop;
    auto c = connected(loop, redis.url());
    redis.stop();
    ASSERT_TRUE(loop.until([&] { return !c->connected(); }));
    auto [ec, r] = loop.run(c->command({"PING"}));
    EXPECT_EQ(ec, net::error::not_connected);
    redis.start();
    ASSERT_TRUE(loop.until([&] { return c->connected(); }));
    EXPECT_EQ(c->connects(), 2U);
    auto [ec2, r2] = loop.run(c->command({"PING"}));
    EXPECT_FALSE(ec2);
    EXPECT_EQ(r2.str, "PONG");
    c->stop();
}

TEST(RedisClient, DeliversPubSubMessagesAndSubscribesAgainAfterReconnect) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    IoLoop loop;
    auto sub = Client::create(loop.context(), options(redis.url()));
    std::vector<std::string> got;
    int connects = 0;
    sub->on_message([&](const std::string& ch, const std::string& payload) {
        got.push_back(ch + "=" + payload);
    });
    sub->on_connect([&] { ++connects; });
    sub->start();
    ASSERT_TRUE(loop.until([&] { return sub->connected(); }));
    EXPECT_FALSE(loop.run(sub->subscribe("ch")));
    auto pub = connected(loop, redis.url());
    auto [ec, n] = loop.run(pub->command({"PUBLISH", "ch", "one"}));
    EXPECT_EQ(n.integer, 1); // one subscriber
    ASSERT_TRUE(loop.until([&] { return got.size() == 1; }));
    EXPECT_EQ(got[0], "ch=one");

    redis.stop();
    redis.start();
    ASSERT_TRUE(loop.until([&] { return connects == 2 && pub->connected(); }));
    auto [ec2, n2] = loop.run(pub->command({"PUBLISH", "ch", "two"}));
    EXPECT_EQ(n2.integer, 1); // subscribed again by the reconnect
    ASSERT_TRUE(loop.until([&] { return got.size() == 2; }));
    EXPECT_EQ(got[1], "ch=two");

    sub->unsubscribe("ch");
    ASSERT_TRUE(loop.until([&] {
        auto [e, r] = loop.run(pub->command({"PUBSUB", "NUMSUB", "ch"}));
        return r.elements.size() == 2 && r.elements[1].integer == 0;
    }));
    sub->stop();
    pub->stop();
}

// A TLS redis-server with a certificate for `san`, trusted by `ca.pem` (the certificate itself).
struct TlsRedis {
    explicit TlsRedis(const std::string& san, bool auth_clients = false)
        : pem(test::make_self_signed(dir.file("ca.pem"), dir.file("key.pem"), san))
        , client_pem(
              test::make_self_signed(dir.file("client.pem"), dir.file("client-key.pem"), "DNS:c"))
        , redis(test::RedisTls{dir.file("ca.pem"), dir.file("key.pem"), trusted(), auth_clients}) {}

    // The CAs the server trusts for client certificates: the client's self-signed one.
    std::string trusted() {
        test::write_file(dir.file("clients.pem"), client_pem);
        return dir.file("clients.pem");
    }

    test::TempDir dir;
    std::string pem, client_pem;
    RedisProcess redis;
};

#define SKIP_WITHOUT_OPENSSL(t)                                                                    \
    if ((t).pem.empty() || (t).client_pem.empty()) {                                               \
        GTEST_SKIP() << "the openssl CLI could not make a certificate";                            \
    }

TEST(RedisClient, SpeaksTlsVerifyingTheServerAgainstTheGivenCa) {
    SKIP_WITHOUT_REDIS();
    TlsRedis t("IP:127.0.0.1");
    SKIP_WITHOUT_OPENSSL(t);
    IoLoop loop;
    auto o = options(t.redis.tls_url());
    o.tls_ca_file = t.dir.file("ca.pem");
    auto c = Client::create(loop.context(), o);
    c->start();
    ASSERT_TRUE(loop.until([&] { return c->connected(); })) << c->last_error();
    auto [ec, r] = loop.run(c->command({"PING"}));
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.str, "PONG");
    // Pub/sub over TLS: a read and a write in flight on one TLS stream.
    auto sub = Client::create(loop.context(), o);
    std::vector<std::string> got;
    sub->on_message([&](const std::string&, const std::string& p) { got.push_back(p); });
    sub->start();
    ASSERT_TRUE(loop.until([&] { return sub->connected(); }));
    EXPECT_FALSE(loop.run(sub->subscribe("ch")));
    for (int i = 0; i < 100; ++i) {
        c->async_command(
            {"PUBLISH", "ch", std::string(10'000, static_cast<char>('a' + i % 26))},
            [](boost::system::error_code, Reply) {});
    }
    ASSERT_TRUE(loop.until([&] { return got.size() == 100; }));
    EXPECT_EQ(got[99], std::string(10'000, static_cast<char>('a' + 99 % 26)));
    sub->stop();
    c->stop();
}

TEST(RedisClient, RefusesAServerCertificateItDoesNotTrust) {
    SKIP_WITHOUT_REDIS();
    TlsRedis t("IP:127.0.0.1");
    SKIP_WITHOUT_OPENSSL(t);
    IoLoop loop;
    auto o = options(t.redis.tls_url());
    o.tls_ca_file = t.dir.file("client.pem"); // some other CA
    auto c = Client::create(loop.context(), o);
    c->start();
    ASSERT_TRUE(loop.until([&] { return !c->last_error().empty(); }));
    EXPECT_FALSE(c->connected());
    EXPECT_NE(c->last_error().find("certificate verify failed"), std::string::npos)
        << c->last_error();
    EXPECT_NE(c->last_error().find("self-signed certificate"), std::string::npos)
        << c->last_error();
    c->stop();
}

TEST(RedisClient, RefusesACertificateForAnotherHost) {
    SKIP_WITHOUT_REDIS();
    TlsRedis t("DNS:elsewhere.example");
    SKIP_WITHOUT_OPENSSL(t);
    IoLoop loop;
    auto o = options(t.redis.tls_url());
    o.tls_ca_file = t.dir.file("ca.pem"); // trusted, but it names another host
    auto c = Client::create(loop.context(), o);
    c->start();
    ASSERT_TRUE(loop.until([&] { return !c->last_error().empty(); }));
    EXPECT_FALSE(c->connected());
    EXPECT_NE(c->last_error().find("IP address mismatch"), std::string::npos) << c->last_error();
    c->stop();
}

TEST(RedisClient, PresentsAClientCertificateWhenTheServerAsks) {
    SKIP_WITHOUT_REDIS();
    TlsRedis t("IP:127.0.0.1", /*auth_clients=*/true);
    SKIP_WITHOUT_OPENSSL(t);
    IoLoop loop;
    auto o = options(t.redis.tls_url());
    o.tls_ca_file = t.dir.file("ca.pem");
    o.tls_cert_file = t.dir.file("client.pem");
    o.tls_key_file = t.dir.file("client-key.pem");
    auto c = Client::create(loop.context(), o);
    c->start();
    ASSERT_TRUE(loop.until([&] { return c->connected(); })) << c->last_error();
    auto [ec, r] = loop.run(c->command({"PING"}));
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.str, "PONG");
    c->stop();
    // Missing files are a configuration error at once, naming the file.
    o.tls_ca_file = t.dir.file("none.pem");
    try {
        (void)Client::create(loop.context(), o);
        ADD_FAILURE() << "a missing CA file was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("none.pem"), std::string::npos) << e.what();
    }
}

TEST(RedisClient, ReportsAnUnreachableServer) {
    IoLoop loop;
    test::TempDir dir;
    auto c = Client::create(loop.context(), options("unix://" + dir.file("none.sock")));
    c->start();
    const bool up = loop.run(c->wait_connected(std::chrono::milliseconds(200)));
    EXPECT_FALSE(up);
    c->stop();
}

} // namespace
} // namespace sluice::redis
