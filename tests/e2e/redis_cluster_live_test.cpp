// End-to-end tests of `sluice serve --redis` while turns stream: previews reach viewers on other
// nodes (pub/sub, loss marked), and a Redis restart mid-turn costs viewers no frame and no repeat.
#include "e2e/redis_cluster.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <optional>

namespace {

using namespace sluice::test;
namespace json = boost::json;
using namespace std::chrono_literals;

// Bytes a viewer was told it lost (`gap` events).
std::uint64_t gap_bytes(const Events& ev) {
    std::uint64_t n = 0;
    for (const auto& e : ev) {
        if (e.type == "gap") {
            n += json::parse(e.data).at("dropped_bytes").to_number<std::uint64_t>();
        }
    }
    return n;
}

// A scripted turn of one long answer: TEXT_BYTES in 16-byte deltas 25 ms apart (~6 s at pace 1:
// time for a viewer to join on C mid-answer even on a loaded machine).
constexpr std::size_t TEXT_BYTES = 4000;

std::string long_text() {
    return answer_text(TEXT_BYTES);
}

std::string write_script(const TempDir& dir) {
    return write_answer_script(dir, long_text());
}

// The text deltas a viewer was sent, joined.
std::string text_of(const Events& ev) {
    std::string t;
    for (const auto& e : ev) {
        if (e.type == "preview") {
            auto v = json::parse(e.data).as_object();
            if (v.at("kind").as_string() == "text") {
                t += std::string(v.at("delta").as_string());
            }
        }
    }
    return t;
}

TEST(RedisClusterLive, ViewersOnOtherNodesSeeTheOpenTurnsPreviews) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, dc, scripts;
    const auto script = write_script(scripts);
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url(), "1");
        a.insert(a.end(), {"--script", script});
        return a;
    };
    SluiceProcess a(args(da));
    SluiceProcess b(args(db));
    SluiceProcess c(args(dc));
    const auto seat = new_seat(a);
    ASSERT_TRUE(eventually([&] { return lists(b, seat) && lists(c, seat); }));
    SseClient on_a(events_url(a, seat));
    SseClient on_b(events_url(b, seat));
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    ASSERT_TRUE(on_b.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));

    const auto t1 = send(a, seat, "stream it");
    // B sees the answer's deltas while the turn runs, not only its frames afterwards.
    ASSERT_TRUE(on_b.wait_for([&](const Events& ev) {
        return count_type(ev, "preview") >= 10 && !has_turn_state(ev, t1, "ended");
    })) << "no preview reached node B while the turn ran";
    // A viewer joining on C mid-answer: its node never saw the answer's start, so it is told.
    SseClient on_c(events_url(c, seat));
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    ASSERT_TRUE(on_b.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    ASSERT_TRUE(on_c.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));

    // B, subscribed from the start, showed what A showed: the answer from its first byte, in
    // order, nothing lost (only the last deltas may be superseded by the answer's frame).
    const auto whole = long_text();
    const auto ta = text_of(on_a.events());
    const auto tb = text_of(on_b.events());
    EXPECT_TRUE(whole.starts_with(tb)) << tb;
    EXPECT_GE(tb.size(), whole.size() / 2) << "B was sent " << tb.size() << " of " << ta.size();
    EXPECT_EQ(gap_bytes(on_b.events()), 0U);
    EXPECT_EQ(frames_seen(on_b.events()), frames_seen(on_a.events()));

    // C joined mid-answer: a gap says how much of it C never got, then it follows live.
    const auto ec = on_c.events();
    ASSERT_FALSE(ec.empty());
    EXPECT_EQ(ec.front().type, "connected");
    const auto tc = text_of(ec);
    EXPECT_GT(gap_bytes(ec), 0U) << "C missed the answer's start without a gap";
    EXPECT_LE(gap_bytes(ec) + tc.size(), whole.size());
    EXPECT_NE(whole.find(tc), std::string::npos) << tc;
    EXPECT_FALSE(tc.empty());
    EXPECT_EQ(frames_seen(ec), frames_seen(on_a.events()));
}

TEST(RedisClusterLive, RedisRestartedMidTurnCostsViewersNoFrameAndNoRepeat) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, dc;
    SluiceProcess a(node_args(da, redis.url(), "1"));
    SluiceProcess b(node_args(db, redis.url(), "1"));
    SluiceProcess c(node_args(dc, redis.url(), "1"));
    const auto seat = new_seat(a);
    ASSERT_TRUE(eventually([&] { return lists(b, seat) && lists(c, seat); }));
    constexpr int VIEWERS = 4; // per node
    std::vector<std::unique_ptr<SseClient>> viewers;
    for (int i = 0; i < VIEWERS; ++i) {
        viewers.push_back(std::make_unique<SseClient>(events_url(b, seat)));
        viewers.push_back(std::make_unique<SseClient>(events_url(c, seat)));
    }
    for (auto& v : viewers) {
        ASSERT_TRUE(v->wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    }
    SseClient on_a(events_url(a, seat));
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));

    // Turns back to back; Redis killed and started again (empty) while the second streams.
    std::uint64_t last = 0;
    for (int t = 0; t < 3; ++t) {
        const auto before = count_type(on_a.events(), "preview");
        last = send(a, seat, "turn " + std::to_string(t));
        ASSERT_GT(last, 0U);
        if (t == 1) {
            ASSERT_TRUE(on_a.wait_for([&](const Events& ev) {
                return count_type(ev, "preview") > before + 2; // the turn is streaming
            }));
            redis.stop(/*kill=*/true);
            std::this_thread::sleep_for(300ms);
            redis.start();
        }
        ASSERT_TRUE(on_a.wait_for(
            [&](const Events& ev) { return has_turn_state(ev, last, "ended"); }, 40s));
    }
    // A's history, as a fresh viewer on A sees it.
    SseClient fresh(events_url(a, seat));
    ASSERT_TRUE(fresh.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto history = frames_seen(fresh.events());
    ASSERT_EQ(history, frames_seen(on_a.events()));
    // Every viewer on B and C ends with exactly A's history: frames_seen fails the test on a
    // duplicate or a hole in what each received (a `connected` starts it over, as a client does).
    for (std::size_t i = 0; i < viewers.size(); ++i) {
        EXPECT_TRUE(
            viewers[i]->wait_for([&](const Events& ev) { return frames_seen(ev) == history; }, 30s))
            << "viewer " << i << " on " << (i % 2 == 0 ? "B" : "C") << " has "
            << frames_seen(viewers[i]->events()).size() << " of " << history.size() << " frames";
    }
}

TEST(RedisClusterLive, AViewerOfAKilledNodeResumesOnAnotherWithoutLossOrRepeat) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, dc;
    SluiceProcess a(node_args(da, redis.url()));
    std::optional<SluiceProcess> b(std::in_place, node_args(db, redis.url()));
    SluiceProcess c(node_args(dc, redis.url()));
    const auto seat = new_seat(a);
    ASSERT_TRUE(eventually([&] { return lists(*b, seat) && lists(c, seat); }));
    SseClient on_a(events_url(a, seat));
    std::optional<SseClient> on_b(std::in_place, events_url(*b, seat));
    // B follows the seat before the turn (a turn state published before a node subscribed is
    // not for it: its viewer learns the turn from the frames in its `connected`).
    ASSERT_TRUE(on_b->wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto t1 = send(a, seat, "before the crash");
    ASSERT_TRUE(on_b->wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    const auto seen_b = frames_seen(on_b->events());
    ASSERT_EQ(seen_b, frames_seen(on_a.events()));
    const auto b_id = last_id(on_b->events());

    // B dies; the seat goes on on A; B's viewer comes back on C with its Last-Event-ID.
    ::kill(b->pid(), SIGKILL);
    b->wait(10s);
    on_b.reset();
    b.reset();
    const auto t2 = send(a, seat, "while B is gone");
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t2, "ended"); }));
    const auto history = frames_seen(on_a.events());
    ASSERT_GT(history.size(), seen_b.size());
    SseClient again(events_url(c, seat), b_id);
    ASSERT_TRUE(again.wait_for([](const Events& ev) { return !ev.empty(); }));
    EXPECT_EQ(again.events().front().type, "resumed") << again.events().front().data;
    ASSERT_TRUE(again.wait_for([&](const Events& ev) {
        auto seen = frames_seen(ev);
        return !seen.empty() && seen.rbegin()->first == history.rbegin()->first;
    }));
    // What it had plus what it got is the history, each frame once (frames_seen checks order).
    EXPECT_EQ(frames_once(seen_b, again.events()), history);
}

// PUBLISH calls Redis has run so far (INFO commandstats).
std::uint64_t publishes(const RedisProcess& redis) {
    const auto out = redis.cli("INFO commandstats");
    const auto at = out.find("cmdstat_publish:calls=");
    return at == std::string::npos ? 0 : std::stoull(out.substr(at + 22));
}

// Followers on a seat's channel (PUBSUB NUMSUB).
std::uint64_t followers(const RedisProcess& redis, const std::string& seat) {
    const auto out = redis.cli("PUBSUB NUMSUB sluice:seat:" + seat + ":c");
    const auto nl = out.find('\n');
    return nl == std::string::npos ? 0 : std::stoull(out.substr(nl + 1));
}

TEST(RedisClusterLive, ANodeFollowsASeatOnlyWhileItHasViewersAndPreviewsGoOnlyToFollowers) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, scripts;
    const auto script = write_script(scripts);
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url(), "1");
        // A 2 s lease: ticks of 200 ms, a mirror unfollowed after 30 ticks (6 s) without viewers.
        a.insert(a.end(), {"--script", script, "--redis-lease-ms", "2000"});
        return a;
    };
    SluiceProcess a(args(da));
    SluiceProcess b(args(db));
    const auto seat = new_seat(a);
    ASSERT_TRUE(eventually([&] { return lists(b, seat); }));
    EXPECT_EQ(followers(redis, seat), 0U); // listed, not followed: nobody watches it on B

    // A viewer on B: B follows the seat; the owner publishes the answer's previews.
    std::optional<SseClient> on_b(std::in_place, events_url(b, seat));
    ASSERT_TRUE(on_b->wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    EXPECT_EQ(followers(redis, seat), 1U);
    const auto p0 = publishes(redis);
    const auto t1 = send(a, seat, "watched");
    ASSERT_TRUE(on_b->wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    const auto watched = publishes(redis) - p0;
    EXPECT_GT(watched, 100U); // ~250 deltas of 16 bytes
    EXPECT_GT(count_type(on_b->events(), "preview"), 100U);

    // The viewer gone: after 30 ticks B lets the mirror go; a turn then publishes no preview.
    on_b.reset();
    ASSERT_TRUE(eventually([&] { return followers(redis, seat) == 0U; }, 20s))
        << "B still follows a seat nobody watches there";
    const auto p1 = publishes(redis);
    SseClient on_a(events_url(a, seat));
    // Attached before the turn: a viewer that joins after a turn ended sees its frames, not its
    // `ended` state (pace 0 ends a turn in milliseconds).
    ASSERT_TRUE(on_a.wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto t2 = send(a, seat, "unwatched");
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return has_turn_state(ev, t2, "ended"); }));
    EXPECT_LT(publishes(redis) - p1, 20U) << "previews published while no node follows the seat";

    // A viewer on B again: followed again, its window read from the stream, A's history.
    SseClient again(events_url(b, seat));
    const auto history = frames_seen(on_a.events());
    ASSERT_TRUE(again.wait_for([&](const Events& ev) { return frames_seen(ev) == history; }));
    EXPECT_EQ(followers(redis, seat), 1U);
    const auto t3 = send(a, seat, "watched again");
    ASSERT_TRUE(again.wait_for([&](const Events& ev) { return has_turn_state(ev, t3, "ended"); }));
    EXPECT_GT(count_type(again.events(), "preview"), 100U);
}

} // namespace
