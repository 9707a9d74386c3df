// Tests of the threaded relay: floods, stalls, ordering, cancellation and global accounting.
#include <sluice/core/relay.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>

namespace {

using namespace sluice;
using namespace std::chrono_literals;

void expect_global_conservation() {
    const auto s = stream_relay_snapshot();
    EXPECT_EQ(
        s.produced_delta_bytes,
        s.forwarded_delta_bytes + s.dropped_delta_bytes + s.retained_delta_bytes);
}

// Receives to the end: the text bytes, and the notices (numbered 0, 1, … and checked in order).
std::pair<std::uint64_t, int> drain_counting(RelayReceiver& rx) {
    std::uint64_t text_bytes = 0;
    int notices = 0;
    while (auto ev = rx.next()) {
        if (const auto* t = std::get_if<llm::Text>(&*ev)) {
            text_bytes += t->text.size();
        } else {
            EXPECT_EQ(std::get<session::Notice>(*ev).text, std::to_string(notices++));
        }
    }
    return {text_bytes, notices};
}

// A delta whose bytes say where it came from, so the newest can be recognised.
std::string numbered(std::size_t i, std::size_t size) {
    std::string s = "<" + std::to_string(i) + ">";
    s.resize(size, '.');
    return s;
}

TEST(Relay, StalledConsumerUnderA40MBFloodKeepsRetainedWithinBudget) {
    const auto base = stream_relay_snapshot();
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    constexpr std::size_t delta = 4096;
    constexpr std::size_t total = 40U * 1000U * 1000U;
    std::size_t sent = 0;
    std::size_t i = 0;
    std::string last;
    while (sent < total) {
        last = numbered(i++, delta);
        ASSERT_TRUE(tx.send(llm::Text{last}));
        sent += delta;
        if (i % 512 == 0) {
            ASSERT_LE(rx.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
        }
    }
    tx.send(session::Done{});
    tx.close();
    const auto mid = stream_relay_snapshot();
    EXPECT_LE(
        mid.retained_delta_bytes - base.retained_delta_bytes, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    EXPECT_LE(mid.peak_retained_delta_bytes, RELAY_DELTA_RETAINED_BUDGET_BYTES);

    std::string received;
    bool done = false;
    while (auto ev = rx.next()) {
        if (const auto* t = std::get_if<llm::Text>(&*ev)) {
            received += t->text;
        } else if (std::holds_alternative<session::Done>(*ev)) {
            done = true;
        }
    }
    EXPECT_TRUE(done);
    EXPECT_GT(received.size(), 0U);
    EXPECT_LE(
        received.size(),
        RELAY_DELTA_RETAINED_BUDGET_BYTES + RELAY_CHANNEL_CAPACITY * RELAY_FORWARD_CHUNK_BYTES
            + delta);
    ASSERT_GE(received.size(), last.size());
    EXPECT_TRUE(received.ends_with(last)); // the newest survive
    EXPECT_FALSE(turn.is_cancelled());     // a normal end
    const auto c = rx.counters();
    EXPECT_EQ(c.produced, sent);
    EXPECT_EQ(c.produced, c.forwarded + c.dropped + c.retained);
    EXPECT_EQ(c.forwarded, received.size());
    expect_global_conservation();
}

TEST(Relay, SemanticEventsInterleavedWithAn8MBFloodArriveCompleteAndInOrder) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    constexpr int semantic_count = 500;
    std::thread producer([tx = std::move(tx)]() mutable {
        const std::string flood(16 * 1024, 'f');
        for (int i = 0; i < 512; ++i) { // 8 MiB
            tx.send(llm::Thinking{flood});
            if (i < semantic_count) {
                tx.send(llm::ToolUse{"bash", std::to_string(i), boost::json::object{{"n", i}}});
            }
        }
        tx.send(session::Done{});
    });
    int expected = 0;
    bool done = false;
    while (auto ev = rx.next()) {
        if (const auto* u = std::get_if<llm::ToolUse>(&*ev)) {
            EXPECT_EQ(u->tool_id, std::to_string(expected));
            EXPECT_EQ(u->input.at("n").as_int64(), expected);
            ++expected;
        } else if (std::holds_alternative<session::Done>(*ev)) {
            done = true;
        }
    }
    producer.join();
    EXPECT_EQ(expected, semantic_count);
    EXPECT_TRUE(done);
    expect_global_conservation();
}

TEST(Relay, DroppingTheReceiverCancelsTheTokenAndEndsTheRelay) {
    const auto base = stream_relay_snapshot();
    CancellationToken turn;
    std::promise<std::chrono::steady_clock::time_point> cancelled_at;
    auto reg = turn.on_cancel([&] { cancelled_at.set_value(std::chrono::steady_clock::now()); });
    auto [tx, rx] = make_stream_relay(turn);
    EXPECT_EQ(stream_relay_snapshot().active_relays, base.active_relays + 1);
    tx.send(llm::Text{"unread"});
    // The producer is idle (not sending) when the caller goes away.
    const auto dropped_at = std::chrono::steady_clock::now();
    { auto gone = std::move(rx); }
    auto fut = cancelled_at.get_future();
    ASSERT_EQ(fut.wait_for(1s), std::future_status::ready);
    EXPECT_LT(fut.get() - dropped_at, 500ms);
    EXPECT_TRUE(turn.is_cancelled());
    EXPECT_TRUE(tx.caller_gone());
    EXPECT_FALSE(tx.send(llm::Text{"late"}));
    const auto after = stream_relay_snapshot();
    EXPECT_EQ(after.active_relays, base.active_relays);
    EXPECT_EQ(after.retained_delta_bytes, base.retained_delta_bytes);
    EXPECT_EQ(after.dropped_delta_bytes - base.dropped_delta_bytes, 10U); // "unread" + "late"
    expect_global_conservation();
}

TEST(Relay, ANormalEndNeverCancels) {
    const auto base = stream_relay_snapshot();
    CancellationToken turn;
    {
        auto [tx, rx] = make_stream_relay(turn);
        tx.send(llm::Text{"a"});
        tx.send(session::Done{});
        tx.close();
        // The caller leaves without reading: the turn is over, nothing to cancel.
    }
    EXPECT_FALSE(turn.is_cancelled());
    EXPECT_EQ(stream_relay_snapshot().active_relays, base.active_relays);
    EXPECT_EQ(stream_relay_snapshot().retained_delta_bytes, base.retained_delta_bytes);
}

TEST(Relay, APromptConsumerSeesEverySmallDeltaAsItsOwnEvent) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    for (int i = 0; i < 1000; ++i) {
        tx.send(llm::Text{"t" + std::to_string(i)});
        auto ev = rx.next();
        ASSERT_TRUE(ev);
        EXPECT_EQ(std::get<llm::Text>(*ev).text, "t" + std::to_string(i));
    }
    tx.close();
    EXPECT_FALSE(rx.next());
    EXPECT_TRUE(rx.ended());
    EXPECT_EQ(rx.counters().dropped, 0U);
}

TEST(Relay, NextForTimesOutWithoutEndingAndThenDelivers) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    EXPECT_FALSE(rx.next_for(20ms));
    EXPECT_FALSE(rx.ended());
    tx.send(llm::Text{"x"});
    auto ev = rx.next_for(1s);
    ASSERT_TRUE(ev);
    tx.close();
    EXPECT_FALSE(rx.next_for(1s));
    EXPECT_TRUE(rx.ended());
}

TEST(Relay, ProducerAndConsumerOnTwoThreadsAgreeOnEveryByte) {
    const auto base = stream_relay_snapshot();
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    constexpr int rounds = 20000;
    std::thread producer([tx = std::move(tx)]() mutable {
        for (int i = 0; i < rounds; ++i) {
            tx.send(llm::Text{std::string(i % 2 == 0 ? 64 : 4096, 'x')});
            if (i % 100 == 0) {
                tx.send(session::Notice{std::to_string(i / 100)});
            }
        }
    });
    const auto [text_bytes, notices] = drain_counting(rx);
    producer.join();
    EXPECT_EQ(notices, rounds / 100);
    const auto c = rx.counters();
    EXPECT_EQ(c.forwarded, text_bytes);
    EXPECT_EQ(c.produced, c.forwarded + c.dropped);
    EXPECT_EQ(c.retained, 0U);
    const auto after = stream_relay_snapshot();
    EXPECT_EQ(after.active_relays, base.active_relays);
    EXPECT_EQ(after.retained_delta_bytes, 0U);
    expect_global_conservation();
}

// A sender in bursts with pauses short, middling and long (the consumer finds the queue full,
// just emptied, or sleeps and is woken): every semantic event still arrives once, in order,
// every byte accounted for, the end seen.
TEST(Relay, BurstsAndPausesOfEveryLengthLoseNoSemanticEventAndEnd) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    constexpr int bursts = 60;
    std::thread producer([tx = std::move(tx)]() mutable {
        for (int b = 0; b < bursts; ++b) {
            for (int i = 0; i < 200; ++i) {
                tx.send(llm::Text{std::string(i % 8 == 0 ? 4096 : 64, 'x')});
            }
            tx.send(session::Notice{std::to_string(b)});
            const auto pause = b % 3 == 0 ? 10us : (b % 3 == 1 ? 300us : 3ms);
            std::this_thread::sleep_for(pause);
        }
    });
    const auto [text_bytes, notices] = drain_counting(rx);
    producer.join();
    EXPECT_TRUE(rx.ended());
    EXPECT_EQ(notices, bursts);
    const auto c = rx.counters();
    EXPECT_EQ(c.forwarded, text_bytes);
    EXPECT_EQ(c.produced, c.forwarded + c.dropped);
    EXPECT_EQ(c.retained, 0U);
    expect_global_conservation();
}

TEST(Relay, ReceiverDestroyedWhileTheProducerFloodsFromAnotherThread) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    std::atomic<bool> stopped{false};
    std::thread producer([tx = std::move(tx), &stopped, turn]() mutable {
        while (!turn.is_cancelled()) {
            if (!tx.send(llm::Text{std::string(1000, 'z')})) {
                break;
            }
        }
        stopped = true;
    });
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(rx.next());
    }
    { auto gone = std::move(rx); }
    producer.join();
    EXPECT_TRUE(stopped.load());
    EXPECT_TRUE(turn.is_cancelled());
    const auto s = stream_relay_snapshot();
    EXPECT_EQ(s.retained_delta_bytes, 0U);
    expect_global_conservation();
}

} // namespace
