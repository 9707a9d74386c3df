// End-to-end tests of `sluice serve --redis --shared-seats`: a node takes a dead owner's seat over
// from the shared folder once its lease ran out, and an owner that cannot hold a lease lets the
// seat go before another node may take it (never two writers of one transcript).
#include "e2e/redis_cluster.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <optional>

namespace {

using namespace sluice::test;
namespace json = boost::json;
using namespace std::chrono_literals;

// A lease of 2 s (renewed every 200 ms) keeps the takeover within seconds.
constexpr const char* LEASE_MS = "2000";

// The node id a node keeps in its data dir.
std::string node_id(const TempDir& dir) {
    std::ifstream in(dir.file("cluster-node"));
    std::string id;
    in >> id;
    return id;
}

// The node holding `seat`'s lease ("" when free).
std::string lease_holder(const RedisProcess& redis, const std::string& seat) {
    auto out = redis.cli("GET sluice:seat:" + seat + ":owner");
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
        out.pop_back();
    }
    return out;
}

// Sends a prompt through `hub` until one is taken (202); returns its turn (0: none in `t`, and
// the last answer is reported).
std::uint64_t send_until_taken(
    const SluiceProcess& hub,
    const std::string& seat,
    const std::string& text,
    std::chrono::milliseconds t = 20s) {
    std::uint64_t turn = 0;
    std::string last;
    eventually(
        [&] {
            auto body = json::serialize(json::object{{"text", text}});
            auto r = http("POST", hub.base() + "/v1/seats/" + seat + "/messages", body);
            if (r.status == 202U) {
                turn = r.json.at("turn").to_number<std::uint64_t>();
            }
            last = std::to_string(r.status) + " " + r.body;
            return r.status == 202U;
        },
        t);
    if (turn == 0) {
        ADD_FAILURE() << "no prompt taken through " << hub.base() << "; the last answer: " << last;
    }
    return turn;
}

TEST(RedisClusterTakeover, ASurvivingNodeTakesADeadOwnersSeatOverFromTheSharedFolder) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, dc, shared, scripts;
    const auto script = write_answer_script(scripts, answer_text(1600)); // ~2.5 s at pace 1
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url(), "1");
        a.insert(
            a.end(),
            {"--script", script, "--shared-seats", shared.path(), "--redis-lease-ms", LEASE_MS});
        return a;
    };
    std::optional<SluiceProcess> a(std::in_place, args(da));
    SluiceProcess b(args(db));
    SluiceProcess c(args(dc));
    const auto seat = new_seat(*a);
    ASSERT_FALSE(seat.empty());
    ASSERT_TRUE(eventually([&] { return lists(b, seat) && lists(c, seat); }));
    ASSERT_EQ(lease_holder(redis, seat), node_id(da));

    // A turn through C runs on A; a second one is cut by A's death mid-answer.
    std::optional<SseClient> on_b(std::in_place, events_url(b, seat));
    ASSERT_TRUE(on_b->wait_for([](const Events& ev) { return count_type(ev, "connected") == 1; }));
    const auto t1 = send(c, seat, "before the crash");
    ASSERT_TRUE(on_b->wait_for([&](const Events& ev) { return has_turn_state(ev, t1, "ended"); }));
    const auto previews = count_type(on_b->events(), "preview");
    const auto t2 = send(c, seat, "the owner dies in this one");
    ASSERT_TRUE(on_b->wait_for(
        [&](const Events& ev) { return count_type(ev, "preview") >= previews + 5; }));
    ::kill(a->pid(), SIGKILL);
    a->wait(10s);
    a.reset();

    // B or C claims the free lease and opens the seat from the shared folder.
    std::string holder;
    ASSERT_TRUE(eventually(
        [&] {
            holder = lease_holder(redis, seat);
            return holder == node_id(db) || holder == node_id(dc);
        },
        20s))
        << "nobody took the seat over; lease: '" << holder << "'";
    SluiceProcess& host = holder == node_id(db) ? b : c;
    SluiceProcess& other = &host == &b ? c : b;

    // A prompt through the other node runs on the new owner, after the interrupted turn.
    const auto t3 = send_until_taken(other, seat, "after the takeover");
    ASSERT_GT(t3, t2) << "the new owner:\n" << host.output() << "\nthe other:\n" << other.output();

    // B's viewer resumes on B with its last id (B's own seat now, or still its mirror): what it
    // had plus what it gets is the new owner's history, each frame once, in order.
    on_b->stop();
    const auto seen_b = frames_seen(on_b->events());
    const auto b_id = last_id(on_b->events());
    on_b.reset();
    SseClient again(events_url(b, seat), b_id);
    ASSERT_TRUE(again.wait_for([&](const Events& ev) { return has_turn_state(ev, t3, "ended"); }))
        << "the turn sent after the takeover did not end";
    EXPECT_EQ(again.events().front().type, "resumed") << again.events().front().data;
    SseClient on_host(events_url(host, seat));
    ASSERT_TRUE(on_host.wait_for([&](const Events& ev) { return !frames_seen(ev).empty(); }));
    const auto history = frames_seen(on_host.events());
    ASSERT_TRUE(again.wait_for([&](const Events& ev) {
        auto s = frames_seen(ev);
        return !s.empty() && s.rbegin()->first == history.rbegin()->first;
    }));
    // What it had plus what it got is the history, each frame once (frames_seen checks order).
    EXPECT_EQ(frames_once(seen_b, again.events()), history);
    // The cut turn is whole in the transcript: closed as interrupted by the node that took over.
    bool interrupted = false;
    for (const auto& [seq, f] : history) {
        interrupted = interrupted || f.find("interrupted") != std::string::npos;
    }
    EXPECT_TRUE(interrupted) << "the turn cut by the owner's death was not closed";

    // A back with its data dir: the seat stays with its new owner (its lease is held), A serves
    // it as any other node does, and prompts through A run there.
    a.emplace(args(da));
    ASSERT_TRUE(eventually([&] { return lists(*a, seat); }));
    const auto t4 = send_until_taken(*a, seat, "through the old owner");
    ASSERT_GT(t4, t3);
    ASSERT_TRUE(
        on_host.wait_for([&](const Events& ev) { return has_turn_state(ev, t4, "ended"); }));
    EXPECT_EQ(lease_holder(redis, seat), holder);
    SseClient on_a(events_url(*a, seat));
    const auto now = frames_seen(on_host.events());
    ASSERT_TRUE(on_a.wait_for([&](const Events& ev) { return frames_seen(ev) == now; }));
}

TEST(RedisClusterTakeover, AnOwnerLetsItsSeatGoWhenItCannotHoldTheLease) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, shared;
    auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url());
        a.insert(a.end(), {"--shared-seats", shared.path(), "--redis-lease-ms", LEASE_MS});
        return a;
    };
    std::optional<SluiceProcess> ap(std::in_place, args(da));
    std::optional<SluiceProcess> bp(std::in_place, args(db));
    SluiceProcess& a = *ap;
    SluiceProcess& b = *bp;
    const auto seat = new_seat(a);
    ASSERT_FALSE(seat.empty());
    ASSERT_TRUE(eventually([&] { return lists(b, seat); }));
    const auto t1 = send(b, seat, "one");
    ASSERT_EQ(t1, 1U);
    const auto seat_url = [&](const SluiceProcess& n) { return n.base() + "/v1/seats/" + seat; };
    const auto turns_done = [&](const SluiceProcess& n, std::uint64_t want) {
        auto r = http("GET", seat_url(n));
        return r.status == 200U && r.json.at("state").as_string() == "idle"
               && r.json.at("turns").to_number<std::uint64_t>() == want;
    };
    ASSERT_TRUE(eventually([&] { return turns_done(a, 1); }));

    // Another holder of the lease (as after this node paused longer than the lease): A lets the
    // seat go at its next renewal and runs nothing for it while the other holds it.
    EXPECT_NE(
        redis.cli("SET sluice:seat:" + seat + ":owner intruder PX 3000").find("OK"),
        std::string::npos);
    const auto let_go = [&](const SluiceProcess& n, const char* why) {
        auto r = http("GET", seat_url(n));
        return r.status == 200U && r.json.at("state").as_string() == "unavailable"
               && r.json.at("reason").as_string().find(why) != std::string::npos;
    };
    ASSERT_TRUE(eventually([&] { return let_go(a, "this node let the seat go"); }, 5s))
        << "A still hosts a seat whose lease another node holds: " << http("GET", seat_url(a)).body;
    // Commands through either node are refused with the reason while nobody may run them.
    auto refused = http("POST", seat_url(b) + "/messages", R"({"text":"nobody may run this"})");
    EXPECT_NE(refused.status, 202U) << refused.body;
    refused = http("POST", seat_url(a) + "/messages", R"({"text":"nor this"})");
    EXPECT_EQ(refused.status, 503U) << refused.body;
    EXPECT_NE(refused.body.find("no node holds the seat's lease"), std::string::npos)
        << refused.body;
    // At once, for the lease it saw held (not only once its own renewals stopped holding).
    EXPECT_NE(a.output().find("another node holds its lease"), std::string::npos) << a.output();

    // The other's lease runs out: a node claims the seat (after seeing it free for a lease), the
    // transcript whole.
    const auto t2 = send_until_taken(b, seat, "two");
    ASSERT_EQ(t2, 2U);
    ASSERT_TRUE(eventually([&] { return turns_done(b, 2); }));

    // Redis gone for longer than the lease: the owner lets the seat go before Redis could hand
    // the lease to anyone else; when Redis is back (empty), a node claims it again.
    const auto holder = lease_holder(redis, seat);
    ASSERT_TRUE(holder == node_id(da) || holder == node_id(db)) << holder;
    const SluiceProcess& owner = holder == node_id(da) ? a : b;
    redis.stop();
    ASSERT_TRUE(eventually([&] { return let_go(owner, "Redis does not answer"); }, 5s))
        << "the owner kept a seat it could not hold the lease of: "
        << http("GET", seat_url(owner)).body;
    redis.start();
    const auto t3 = send_until_taken(a, seat, "three");
    ASSERT_EQ(t3, 3U);
    ASSERT_TRUE(eventually([&] { return turns_done(a, 3) && turns_done(b, 3); }));
    auto page = http("GET", seat_url(b) + "/history?turns=10");
    ASSERT_EQ(page.status, 200U) << page.body;
    EXPECT_EQ(page.json.at("turns").as_array().size(), 3U) << page.body;

    // The owner restarted with its data dir before its lease ran out: it hosts its seat again at
    // its first tick (its own, no wait), the epoch and turns as they were.
    const auto last = lease_holder(redis, seat);
    auto& node = last == node_id(da) ? ap : bp;
    const TempDir& dir = last == node_id(da) ? da : db;
    const auto before = http("GET", seat_url(*node)).json;
    ASSERT_EQ(node->terminate(), 0);
    node.emplace(args(dir));
    ASSERT_TRUE(eventually([&] { return turns_done(*node, 3); }, 5s))
        << "the restarted owner does not host its seat";
    EXPECT_EQ(lease_holder(redis, seat), last);
    EXPECT_EQ(http("GET", seat_url(*node)).json.at("epoch"), before.at("epoch"));
    EXPECT_EQ(send_until_taken(*node, seat, "four"), 4U);
}

} // namespace
