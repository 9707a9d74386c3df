// Tests of async_next and RelayReader: the relay received from Asio coroutines, with
// cancellation.
#include <sluice/core/relay_async.hpp>
#include <sluice/core/relay_reader.hpp>
#include <sluice/detail/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <thread>

namespace {

using namespace sluice;
using namespace std::chrono_literals;

void rethrow(const std::exception_ptr& e) {
    if (e) {
        std::rethrow_exception(e);
    }
}

enum class Receive { async_next, reader };

// Runs `produce(tx)` on another thread, sending events numbered 0 .. n-1 (text or notices),
// against a coroutine receiving with async_next (or a RelayReader); expects all n, in order,
// then the end.
template <class Produce>
void expect_every_event_in_order(int n, Produce produce, Receive how = Receive::async_next) {
    net::io_context io;
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    std::vector<std::string> got;
    bool ended = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto ex = co_await net::this_coro::executor;
            RelayReader reader(rx);
            for (;;) {
                std::optional<StreamEvent> ev;
                if (how == Receive::reader) {
                    ev = co_await reader.next();
                    EXPECT_FALSE(reader.error());
                } else {
                    auto [ec, e] = co_await async_next(rx, ex, net::as_tuple(net::use_awaitable));
                    EXPECT_FALSE(ec);
                    ev = std::move(e);
                }
                if (!ev) {
                    ended = true;
                    co_return;
                }
                const auto* t = std::get_if<llm::Text>(&*ev);
                got.push_back(t != nullptr ? t->text : std::get<session::Notice>(*ev).text);
            }
        },
        rethrow);
    std::thread producer([tx = std::move(tx), produce]() mutable { produce(tx); });
    io.run();
    producer.join();
    EXPECT_TRUE(ended);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(got[static_cast<std::size_t>(i)], std::to_string(i));
    }
}

TEST(RelayAsync, ACoroutineReceivesEveryEventFromAnotherThread) {
    expect_every_event_in_order(200, [](RelaySender& tx) {
        for (int i = 0; i < 200; ++i) {
            tx.send(llm::Text{std::to_string(i)});
            if (i % 50 == 0) {
                std::this_thread::sleep_for(1ms); // let the consumer park and be woken
            }
        }
    });
}

// Bursts with pauses short and long (the coroutine finds events ready, or parks and is woken by
// the producer's post): every event arrives, in order, and the end.
TEST(RelayAsync, BurstsAndPausesOfEveryLengthArriveInOrder) {
    expect_every_event_in_order(3000, [](RelaySender& tx) {
        for (int i = 0; i < 3000; ++i) {
            tx.send(session::Notice{std::to_string(i)});
            if (i % 100 == 99) {
                std::this_thread::sleep_for(i % 300 == 99 ? 10us : (i % 300 == 199 ? 300us : 3ms));
            }
        }
    });
}

TEST(RelayAsync, AReceiveRacedAgainstATimerIsCancelledCleanly) {
    using net::experimental::awaitable_operators::operator||;
    net::io_context io;
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    bool timed_out = false;
    std::string after;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto ex = co_await net::this_coro::executor;
            net::steady_timer timer(ex, 10ms);
            auto r = co_await (
                async_next(rx, ex, net::use_awaitable) || timer.async_wait(net::use_awaitable));
            timed_out = r.index() == 1;
            tx.send(llm::Text{"later"});
            auto [ec, ev] = co_await async_next(rx, ex, net::as_tuple(net::use_awaitable));
            EXPECT_FALSE(ec);
            if (ev) {
                after = std::get<llm::Text>(*ev).text;
            }
        },
        rethrow);
    io.run();
    EXPECT_TRUE(timed_out);
    EXPECT_EQ(after, "later");
    EXPECT_FALSE(turn.is_cancelled());
}

// A reader hands over waiting events without a post, and yields the thread at least once per
// batch: a handler that reposts itself counts the events taken between its turns.
TEST(RelayReader, TakesWaitingEventsAtOnceAndYieldsTheThreadEveryBatch) {
    net::io_context io;
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    constexpr int N = 1000;
    for (int i = 0; i < N; ++i) {
        tx.send(session::Notice{std::to_string(i)}); // semantic: all kept, none merged
    }
    tx.close();
    int taken = 0;
    int run = 0;
    int longest_run = 0;
    bool ended = false;
    std::vector<std::string> got;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            RelayReader reader(rx);
            while (auto ev = co_await reader.next()) {
                got.push_back(std::get<session::Notice>(*ev).text);
                ++taken;
                ++run;
            }
            EXPECT_FALSE(reader.error());
            ended = true;
        },
        rethrow);
    std::function<void()> tick = [&] {
        longest_run = std::max(longest_run, run);
        run = 0;
        if (!ended) {
            net::post(io, tick);
        }
    };
    net::post(io, tick);
    io.run();
    EXPECT_TRUE(ended);
    ASSERT_EQ(taken, N);
    for (int i = 0; i < N; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], std::to_string(i));
    }
    // async_next alone posts every event (runs of 1); without the batch bound, one run of 1000.
    EXPECT_GT(longest_run, 8);
    EXPECT_LE(longest_run, static_cast<int>(RELAY_CHANNEL_CAPACITY) + 1);
}

TEST(RelayReader, EveryEventFromAnotherThreadInOrderThroughBurstsAndPauses) {
    expect_every_event_in_order(
        3000,
        [](RelaySender& tx) {
            for (int i = 0; i < 3000; ++i) {
                tx.send(session::Notice{std::to_string(i)});
                if (i % 100 == 99) {
                    std::this_thread::sleep_for(
                        i % 300 == 99 ? 10us : (i % 300 == 199 ? 300us : 3ms));
                }
            }
        },
        Receive::reader);
}

// A wait cancelled through the coroutine's slot returns nullopt with operation_aborted and
// leaves the relay intact: the next read gets what is sent later, and the turn is not cancelled.
TEST(RelayReader, ACancelledWaitSaysSoAndTheRelayGoesOn) {
    net::io_context io;
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    RelayReader reader(rx);
    net::cancellation_signal stop;
    boost::system::error_code first_error;
    bool first_empty = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto ev = co_await reader.next();
            first_empty = !ev.has_value();
            first_error = reader.error();
        },
        net::bind_cancellation_slot(stop.slot(), [](const std::exception_ptr& e) { rethrow(e); }));
    net::steady_timer timer(io, 10ms);
    timer.async_wait(
        [&](boost::system::error_code) { stop.emit(net::cancellation_type::terminal); });
    io.run();
    EXPECT_TRUE(first_empty);
    EXPECT_EQ(first_error, net::error::operation_aborted);
    EXPECT_FALSE(turn.is_cancelled());
    io.restart();
    tx.send(llm::Text{"later"});
    std::string after;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            if (auto ev = co_await reader.next()) {
                after = std::get<llm::Text>(*ev).text;
            }
            EXPECT_FALSE(reader.error());
        },
        rethrow);
    io.run();
    EXPECT_EQ(after, "later");
}

} // namespace
