// End-to-end tests of `sluice serve --redis`: one real redis-server, several real hubs.
#include "e2e/redis_cluster.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <optional>
#include <thread>

namespace {

using namespace sluice::test;
namespace json = boost::json;
using namespace std::chrono_literals;

TEST(RedisCluster, RefusesToStartWhenRedisDoesNotAnswer) {
    TempDir dir;
    SluiceProcess hub(node_args(dir, "unix://" + dir.file("none.sock")), /*wait_for_listen=*/false);
    EXPECT_EQ(hub.wait(15s), 2);
    EXPECT_EQ(hub.output().find("listening on"), std::string::npos);
}

TEST(RedisCluster, AnyNodeServesAnySeatAndResumesOnAnother) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, dc;
    SluiceProcess a(node_args(da, redis.url()));
    SluiceProcess b(node_args(db, redis.url()));
    SluiceProcess c(node_args(dc, redis.url()));
    const auto seat = new_seat(a);
    SseClient on_a(events_url(a, seat));
    // Attached before the turn: a viewer that joins after a turn ended sees its frames, not its
    // `ended` state (pace 0 ends a turn in milliseconds).
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto t1 = send(a, seat, "first prompt");
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));

    // B lists the seat and serves it: connected from the stream, then live frames.
    ASSERT_TRUE(eventually([&] { return lists(b, seat) && lists(c, seat); }));
    SseClient on_b(events_url(b, seat));
    ASSERT_TRUE(on_b.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto after_t1 = frames_seen(on_a.events());
    ASSERT_TRUE(on_b.wait_for([&](const Events& ev) { return frames_seen(ev) == after_t1; }));
    const auto b_id = last_id(on_b.events());

    const auto t2 = send(a, seat, "second prompt");
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t2, "ended"); }));
    const auto after_t2 = frames_seen(on_a.events());
    ASSERT_GT(after_t2.size(), after_t1.size());
    ASSERT_TRUE(on_b.wait_for([&](const Events& ev) { return frames_seen(ev) == after_t2; }));
    // Turn states cross too (pub/sub, after the turn's last frame).
    EXPECT_TRUE(on_b.wait_for([&](const Events& ev) { return has_turn_state(ev, t2, "ended"); }));

    // C resumes with B's id from before the second turn: recovered, exactly the frames after.
    SseClient on_c(events_url(c, seat), b_id);
    ASSERT_TRUE(on_c.wait_for([](const Events& ev) { return !ev.empty(); }));
    EXPECT_EQ(on_c.events().front().type, "resumed") << on_c.events().front().data;
    const auto from = std::stoll(b_id.substr(b_id.rfind(':') + 1)) + 1;
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) {
        auto seen = frames_seen(ev);
        return !seen.empty() && seen.rbegin()->first == after_t2.rbegin()->first;
    }));
    const auto seen_c = frames_seen(on_c.events());
    for (const auto& [seq, f] : seen_c) {
        EXPECT_GE(seq, from);
        EXPECT_EQ(f, after_t2.at(seq));
    }
    EXPECT_EQ(seen_c.size(), after_t2.size() - static_cast<std::size_t>(from));
}

TEST(RedisCluster, PagesBelowTheWindowComeFromTheOwner) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, dc;
    auto args_a = node_args(da, redis.url());
    auto args_c = node_args(dc, redis.url());
    for (auto* a : {&args_a, &args_c}) {
        a->insert(a->end(), {"--window-cap", "4"});
    }
    SluiceProcess a(args_a);
    SluiceProcess c(args_c);
    const auto seat = new_seat(a);
    // Each turn's end is read from the seat itself: with a window of 4 frames a viewer that
    // falls 4 frames behind (a loaded machine) is let go, and would never see the turn end.
    for (int i = 0; i < 3; ++i) {
        const auto t = send(a, seat, "turn " + std::to_string(i));
        ASSERT_TRUE(eventually([&] {
            const auto info = http("GET", a.base() + "/v1/seats/" + seat).json;
            return info.at("state").as_string() == "idle" && info.at("turns").is_number()
                   && info.at("turns").to_number<std::uint64_t>() >= t;
        }));
    }
    const auto first =
        http("GET", a.base() + "/v1/seats/" + seat).json.at("window").at("first").as_int64();
    ASSERT_GT(first, 0);
    ASSERT_TRUE(eventually([&] { return lists(c, seat); }));
    const auto q = "/v1/seats/" + seat + "/history?turns=1&before=" + std::to_string(first);
    auto from_a = http("GET", a.base() + q);
    auto from_c = http("GET", c.base() + q);
    ASSERT_EQ(from_a.status, 200U) << from_a.body;
    EXPECT_EQ(from_c.status, 200U) << from_c.body;
    EXPECT_EQ(from_c.body, from_a.body); // read from A's transcript
}

TEST(RedisCluster, CommandsReachTheOwnerThroughAnyNodeAndSurviveRestarts) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, dc;
    std::optional<SluiceProcess> a(std::in_place, node_args(da, redis.url()));
    SluiceProcess c(node_args(dc, redis.url()));
    const auto seat = new_seat(*a);
    ASSERT_TRUE(eventually([&] { return lists(c, seat); }));
    SseClient on_c(events_url(c, seat));
    ASSERT_TRUE(on_c.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));

    // A prompt sent to C runs on A (the owner); C's viewer sees what A's history holds.
    const auto t1 = send(c, seat, "through C");
    ASSERT_EQ(t1, 1U);
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    {
        SseClient on_a(events_url(*a, seat));
        ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return !ev.empty(); }));
        EXPECT_EQ(frames_seen(on_c.events()), frames_seen(on_a.events()));
    }
    // History pages come from the owner (the transcript is there), the same on every node.
    auto page_a = http("GET", a->base() + "/v1/seats/" + seat + "/history?turns=1");
    auto page_c = http("GET", c.base() + "/v1/seats/" + seat + "/history?turns=1");
    EXPECT_EQ(page_c.status, 200U) << page_c.body;
    EXPECT_EQ(page_c.body, page_a.body);
    auto cancel = http("POST", c.base() + "/v1/seats/" + seat + "/cancel", "{}");
    EXPECT_EQ(cancel.status, 200U) << cancel.body; // the owner's answer: nothing running
    EXPECT_EQ(cancel.json.at("cancelled").as_bool(), false);

    // The owner killed: commands get 503 with the reason; C's viewer keeps its stream.
    ::kill(a->pid(), SIGKILL);
    a->wait(10s);
    a.reset();
    ASSERT_TRUE(eventually([&] {
        auto r =
            http("POST", c.base() + "/v1/seats/" + seat + "/messages", R"({"text":"nobody home"})");
        return r.status == 503U && r.body.find("gone") != std::string::npos;
    }));
    // Once its lease ran out (10 s TTL), every other node lists the seat `unavailable`, with
    // why: no node takes it over (the transcript is on A's disk), it waits for its owner.
    const auto state_on_c = [&] {
        auto r = http("GET", c.base() + "/v1/seats/" + seat);
        return r.status == 200U ? r.json.as_object() : boost::json::object{};
    };
    ASSERT_TRUE(eventually(
        [&] {
            auto o = state_on_c();
            return o.contains("state") && o.at("state").as_string() == "unavailable";
        },
        20s));
    EXPECT_NE(std::string(state_on_c().at("reason").as_string()).find("gone"), std::string::npos);

    // The owner back (same data dir, same node id): prompts through C work again, C's viewer
    // continues with no duplicate and no hole.
    a.emplace(node_args(da, redis.url()));
    std::uint64_t t2 = 0;
    ASSERT_TRUE(eventually([&] {
        auto r = http(
            "POST", c.base() + "/v1/seats/" + seat + "/messages", R"({"text":"after restart"})");
        if (r.status == 202U) {
            t2 = r.json.at("turn").to_number<std::uint64_t>();
        }
        return r.status == 202U;
    }));
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) { return has_turn_state(ev, t2, "ended"); }));
    ASSERT_TRUE(eventually([&] { return state_on_c().at("state").as_string() != "unavailable"; }));

    // Redis restarted (empty): the owner seeds the stream again; C resyncs and follows.
    redis.stop();
    redis.start();
    std::uint64_t t3 = 0;
    ASSERT_TRUE(eventually([&] {
        auto r =
            http("POST", c.base() + "/v1/seats/" + seat + "/messages", R"({"text":"after redis"})");
        if (r.status == 202U) {
            t3 = r.json.at("turn").to_number<std::uint64_t>();
        }
        return r.status == 202U;
    }));
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) { return has_turn_state(ev, t3, "ended"); }));
    SseClient on_a(events_url(*a, seat));
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return !ev.empty(); }));
    const auto history = frames_seen(on_a.events());
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) { return frames_seen(ev) == history; }));
}

} // namespace
