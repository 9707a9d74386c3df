// End-to-end tests of Web Push in a cluster (`sluice serve --redis --shared-seats`): every node
// signs with one VAPID key and knows every subscription, made through whichever node; only a
// seat's owner pushes, once per prompt, also when the owner is killed while a prompt waits and
// another node takes the seat over. A loopback push service decrypts each push (RFC 8291) and
// checks its VAPID JWT (tests/support/push_service.cpp); the claude seats run
// tests/support/fake_agent.py, whose "permission: C" asks to run C and waits.
#include "e2e/redis_cluster.hpp"
#include "support/push_service.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

namespace {

using namespace sluice::test;
namespace json = boost::json;
using namespace std::chrono_literals;

// A lease of 2 s (renewed every 200 ms) keeps the takeover within seconds.
constexpr const char* LEASE_MS = "2000";

std::string node_id(const TempDir& dir) {
    std::ifstream in(dir.file("cluster-node"));
    std::string id;
    in >> id;
    return id;
}

std::string lease_holder(const RedisProcess& redis, const std::string& seat) {
    auto out = redis.cli("GET sluice:seat:" + seat + ":owner");
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
        out.pop_back();
    }
    return out;
}

std::string public_key(const SluiceProcess& node) {
    const auto r = http("GET", node.base() + "/v1/push/key");
    EXPECT_EQ(r.status, 200U) << r.body;
    return r.status == 200U ? std::string(r.json.at("public_key").as_string()) : std::string();
}

unsigned subscribe(const SluiceProcess& node, const BrowserKeys& ua, const std::string& endpoint) {
    const auto r = http(
        "POST",
        node.base() + "/v1/push/subscriptions",
        ua.subscription_json(endpoint),
        {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 201U) << r.body;
    return r.status;
}

std::size_t subscriptions(const SluiceProcess& node) {
    const auto r = http("GET", node.base() + "/v1/push/subscriptions");
    return r.status == 200U ? r.json.at("subscriptions").as_array().size() : 0U;
}

std::string seat_state(const SluiceProcess& node, const std::string& seat) {
    const auto r = http("GET", node.base() + "/v1/seats/" + seat);
    return r.status == 200U ? std::string(r.json.at("state").as_string()) : std::string();
}

// One push as the browser reads it.
struct Pushed {
    std::string target; // the endpoint's path: which subscription
    json::object payload;
};

// Every push received, decrypted with the keys of its endpoint, its VAPID JWT checked against
// `key` (a failure to decrypt or verify fails the test).
std::vector<Pushed> pushes(
    const LoopbackReceiver& service,
    const std::map<std::string, const BrowserKeys*>& keys,
    const std::string& key) {
    std::vector<Pushed> out;
    for (const auto& r : service.received()) {
        const auto ua = keys.find(r.target);
        if (ua == keys.end()) {
            ADD_FAILURE() << "a push to an endpoint nobody subscribed: " << r.target;
            continue;
        }
        EXPECT_EQ(check_vapid(r.header("authorization"), key, service.url("")), "")
            << "a push to " << r.target << " not signed with the cluster's key";
        std::string why;
        const auto text = decrypt_push(r.body, *ua->second, &why);
        if (!text) {
            ADD_FAILURE() << "a push to " << r.target << " does not decrypt: " << why;
            continue;
        }
        out.push_back({r.target, json::parse(*text).as_object()});
    }
    return out;
}

// How many pushes to `target` are about the prompt asking to run `command`.
std::size_t count_prompt(
    const std::vector<Pushed>& got, const std::string& target, const std::string& command) {
    std::size_t n = 0;
    for (const auto& p : got) {
        const auto* summary = p.payload.if_contains("summary");
        n += p.target == target && p.payload.at("kind") == "permission" && summary != nullptr
                     && summary->is_string() && summary->get_string() == command
                 ? 1U
                 : 0U;
    }
    return n;
}

std::string
request_of(const std::vector<Pushed>& got, const std::string& target, const std::string& command) {
    for (const auto& p : got) {
        if (p.target == target && p.payload.at("summary").as_string() == command) {
            return std::string(p.payload.at("request_id").as_string());
        }
    }
    return {};
}

TEST(RedisClusterPush, OnlyTheOwnerPushesAWaitingPromptOnceAlsoAfterItIsKilledAndTakenOver) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, shared, bin;
    const auto claude = fake_claude(bin);
    LoopbackReceiver service;
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url());
        // A turn that ran over a second and ended or failed would be pushed too: a turn the
        // takeover closes must not be.
        a.insert(
            a.end(),
            {"--claude-bin",
             claude,
             "--shared-seats",
             shared.path(),
             "--redis-lease-ms",
             LEASE_MS,
             "--notify-long-turn",
             "1"});
        return a;
    };
    std::optional<SluiceProcess> a(std::in_place, args(da));
    SluiceProcess b(args(db));

    // One VAPID key for the cluster: the browser subscribed with one applicationServerKey.
    const auto key = public_key(*a);
    ASSERT_FALSE(key.empty());
    ASSERT_EQ(public_key(b), key) << "the nodes sign with different VAPID keys";

    const auto seat = new_seat(*a, {.name = "c", .agent = "claude", .token = {}});
    ASSERT_FALSE(seat.empty());
    ASSERT_TRUE(eventually([&] { return lists(b, seat); }));
    ASSERT_EQ(lease_holder(redis, seat), node_id(da));

    // A browser subscribes through B (not the owner), another through A; both nodes know both.
    const auto via_b = BrowserKeys::make();
    const auto via_a = BrowserKeys::make();
    const std::string to_b = "/push/via-b";
    const std::string to_a = "/push/via-a";
    const std::map<std::string, const BrowserKeys*> keys{{to_b, &via_b}, {to_a, &via_a}};
    ASSERT_EQ(subscribe(b, via_b, service.url(to_b)), 201U);
    ASSERT_EQ(subscribe(*a, via_a, service.url(to_a)), 201U);
    ASSERT_TRUE(eventually([&] { return subscriptions(*a) == 2 && subscriptions(b) == 2; }))
        << "A lists " << subscriptions(*a) << ", B " << subscriptions(b);

    // A prompt waits on A (sent through B, forwarded): one push to each subscription, from A.
    const std::string before = "rm -rf before";
    ASSERT_GT(send(b, seat, "permission: " + before), 0U);
    ASSERT_TRUE(service.wait_for(2)) << "no push for the waiting prompt:\n" << a->output();
    std::this_thread::sleep_for(1s);
    auto got = pushes(service, keys, key);
    ASSERT_EQ(got.size(), 2U);
    EXPECT_EQ(count_prompt(got, to_b, before), 1U);
    EXPECT_EQ(count_prompt(got, to_a, before), 1U);
    const auto asked = request_of(got, to_b, before);
    EXPECT_FALSE(asked.empty());
    EXPECT_EQ(request_of(got, to_a, before), asked);
    EXPECT_EQ(got[0].payload.at("seat").as_string(), seat);

    // The owner dies while the prompt waits; B takes the seat over from the shared folder.
    ::kill(a->pid(), SIGKILL);
    a->wait(10s);
    a.reset();
    ASSERT_TRUE(eventually([&] { return lease_holder(redis, seat) == node_id(db); }, 20s))
        << "B did not take the seat over; lease: '" << lease_holder(redis, seat) << "'";
    ASSERT_TRUE(eventually([&] { return seat_state(b, seat) == "idle"; }, 20s))
        << "the seat on B: " << seat_state(b, seat) << "\n"
        << b.output();
    // A grace period (longer than a lease, many refreshes): B pushes nothing of that prompt again,
    // nor of the turn the takeover closed.
    std::this_thread::sleep_for(3s);
    got = pushes(service, keys, key);
    EXPECT_EQ(got.size(), 2U) << "pushes after the takeover: "
                              << (got.empty() ? "" : json::serialize(got.back().payload));
    EXPECT_EQ(count_prompt(got, to_b, before), 1U);
    EXPECT_EQ(count_prompt(got, to_a, before), 1U);

    // A prompt on the seat B owns now: pushed once by B, to both, the one made through A too.
    const std::string after = "rm -rf after";
    ASSERT_GT(send(b, seat, "permission: " + after), 0U);
    ASSERT_TRUE(service.wait_for(4)) << "no push for the prompt on B:\n" << b.output();
    std::this_thread::sleep_for(1s);
    got = pushes(service, keys, key);
    EXPECT_EQ(got.size(), 4U);
    EXPECT_EQ(count_prompt(got, to_b, after), 1U);
    EXPECT_EQ(count_prompt(got, to_a, after), 1U);
    EXPECT_EQ(count_prompt(got, to_b, before), 1U);
    EXPECT_NE(request_of(got, to_a, after), asked);
}

TEST(RedisClusterPush, AGoneSubscriptionIsRemovedForEveryNode) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, bin;
    const auto claude = fake_claude(bin);
    LoopbackReceiver service;
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url());
        a.insert(a.end(), {"--claude-bin", claude});
        return a;
    };
    SluiceProcess a(args(da));
    SluiceProcess b(args(db));
    const auto seat = new_seat(a, {.name = "c", .agent = "claude", .token = {}});
    ASSERT_FALSE(seat.empty());
    const auto ua = BrowserKeys::make();
    ASSERT_EQ(subscribe(b, ua, service.url("/push/gone")), 201U);
    ASSERT_TRUE(eventually([&] { return subscriptions(a) == 1; }));
    service.script({410});
    ASSERT_GT(send(a, seat, "permission: ls"), 0U);
    ASSERT_TRUE(service.wait_for(1));
    // A removed it from Redis: B lists it no more (within a refresh).
    EXPECT_TRUE(eventually([&] { return subscriptions(a) == 0 && subscriptions(b) == 0; }))
        << "A lists " << subscriptions(a) << ", B " << subscriptions(b);
}

} // namespace
