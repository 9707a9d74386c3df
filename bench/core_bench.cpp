// Relay throughput side by side with asio's concurrent_channel and a mutex+condvar deque.
//
// A producer thread sends mixed 64 B and 4 KiB text deltas; the benchmark thread consumes them
// promptly. Each hand-off moves the same StreamEvent, so the three differ only in the queue.
#include <sluice/core/relay.hpp>
#include <sluice/core/relay_async.hpp>
#include <sluice/core/relay_reader.hpp>
#include <sluice/detail/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace {

using sluice::StreamEvent;
using namespace sluice; // net

constexpr std::int64_t EVENTS = 200'000;

// The mixed workload: every 8th delta is 4 KiB, the rest 64 B (token-sized).
StreamEvent delta(std::int64_t i) {
    static const std::string small(64, 's');
    static const std::string big(4096, 'b');
    return sluice::llm::Text{i % 8 == 0 ? big : small};
}

std::int64_t payload_bytes() {
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < EVENTS; ++i) {
        total += static_cast<std::int64_t>(sluice::preview_bytes(delta(i)).value_or(0));
    }
    return total;
}

std::int64_t delivered_bytes(const StreamEvent& ev) {
    return static_cast<std::int64_t>(sluice::preview_bytes(ev).value_or(0));
}

// What reached the consumer: its payload bytes per second of wall time (the figure: a
// lossy relay that drops under a slow consumer must still hand a prompt one nearly everything),
// and the share of what was produced.
void report_delivered(benchmark::State& state, std::int64_t delivered) {
    state.SetItemsProcessed(state.iterations() * EVENTS);
    state.SetBytesProcessed(state.iterations() * payload_bytes());
    state.counters["delivered_Bps"] =
        benchmark::Counter(static_cast<double>(delivered), benchmark::Counter::kIsRate);
    state.counters["delivered_share"] =
        static_cast<double>(delivered) / static_cast<double>(state.iterations() * payload_bytes());
}

void BM_RelayFastConsumer(benchmark::State& state) {
    std::int64_t delivered = 0;
    for (auto _ : state) {
        sluice::CancellationToken turn;
        auto [tx, rx] = sluice::make_stream_relay(turn);
        std::thread producer([tx = std::move(tx)]() mutable {
            for (std::int64_t i = 0; i < EVENTS; ++i) {
                tx.send(delta(i));
            }
        });
        std::int64_t n = 0;
        while (auto ev = rx.next()) {
            delivered += delivered_bytes(*ev);
            benchmark::DoNotOptimize(*ev);
            ++n;
        }
        producer.join();
        // The relay is lossy by design: what a consumer that falls behind did not get.
        state.counters["dropped_bytes"] = static_cast<double>(rx.counters().dropped);
        state.counters["delivered_events"] = static_cast<double>(n);
        benchmark::DoNotOptimize(n);
    }
    report_delivered(state, delivered);
}

BENCHMARK(BM_RelayFastConsumer)->Unit(benchmark::kMillisecond)->UseRealTime();

// A coroutine consumer on an io_context: `Read` takes the next event (nullopt at the end).
template <class Read>
void relay_async_consumer(benchmark::State& state, Read read) {
    std::int64_t delivered = 0;
    for (auto _ : state) {
        sluice::CancellationToken turn;
        auto relay = sluice::make_stream_relay(turn);
        auto& rx = relay.second;
        net::io_context io;
        std::int64_t n = 0;
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
                sluice::RelayReader reader(rx);
                while (auto ev = co_await read(rx, reader, io)) {
                    delivered += delivered_bytes(*ev);
                    ++n;
                }
            },
            net::detached);
        std::thread producer([tx = std::move(relay.first)]() mutable {
            for (std::int64_t i = 0; i < EVENTS; ++i) {
                tx.send(delta(i));
            }
        });
        io.run();
        producer.join();
        state.counters["dropped_bytes"] = static_cast<double>(rx.counters().dropped);
        state.counters["delivered_events"] = static_cast<double>(n);
    }
    report_delivered(state, delivered);
}

// The consumer as the runtime's agents and `sluice run` have it: a coroutine reading with
// RelayReader (waiting events at once, async_next when it must wait or after a batch).
void BM_RelayAsyncConsumer(benchmark::State& state) {
    relay_async_consumer(
        state, [](sluice::RelayReceiver&, sluice::RelayReader& reader, net::io_context&) {
            return reader.next();
        });
}

BENCHMARK(BM_RelayAsyncConsumer)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same coroutine on async_next alone (an operation and a posted completion per event):
// what the agents had before RelayReader.
void BM_RelayAsyncNextEach(benchmark::State& state) {
    relay_async_consumer(
        state,
        [](sluice::RelayReceiver& rx,
           sluice::RelayReader&,
           net::io_context& io) -> net::awaitable<std::optional<StreamEvent>> {
            auto [ec, ev] = co_await sluice::async_next(
                rx, io.get_executor(), net::as_tuple(net::use_awaitable));
            if (ec) {
                co_return std::nullopt;
            }
            co_return std::move(ev);
        });
}

BENCHMARK(BM_RelayAsyncNextEach)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AsioConcurrentChannel(benchmark::State& state) {
    using channel =
        net::experimental::concurrent_channel<void(boost::system::error_code, StreamEvent)>;
    std::int64_t delivered = 0;
    for (auto _ : state) {
        net::io_context io;
        channel ch(io, sluice::RELAY_CHANNEL_CAPACITY);
        // The producer is a coroutine on its own io_context thread, sending as the channel
        // allows (async_send suspends while the 64-event buffer is full): asio's own idiom.
        net::io_context producer_io;
        net::co_spawn(
            producer_io,
            [&]() -> net::awaitable<void> {
                for (std::int64_t i = 0; i < EVENTS; ++i) {
                    co_await ch.async_send(
                        boost::system::error_code{}, delta(i), net::use_awaitable);
                }
                ch.close();
            },
            net::detached);
        std::thread producer([&] { producer_io.run(); });
        // The consumer is a coroutine on the io_context, as a relay's awaitable caller would be.
        std::int64_t n = 0;
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
                for (;;) {
                    auto [ec, ev] = co_await ch.async_receive(net::as_tuple(net::use_awaitable));
                    if (ec) {
                        co_return;
                    }
                    delivered += delivered_bytes(ev);
                    benchmark::DoNotOptimize(ev);
                    ++n;
                }
            },
            net::detached);
        io.run();
        producer.join();
        benchmark::DoNotOptimize(n);
    }
    report_delivered(state, delivered);
}

BENCHMARK(BM_AsioConcurrentChannel)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MutexCondvarDeque(benchmark::State& state) {
    std::int64_t delivered = 0;
    for (auto _ : state) {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<StreamEvent> q;
        bool closed = false;
        std::thread producer([&] {
            for (std::int64_t i = 0; i < EVENTS; ++i) {
                StreamEvent ev = delta(i);
                {
                    std::lock_guard lock(mu);
                    q.push_back(std::move(ev));
                }
                cv.notify_one();
            }
            {
                std::lock_guard lock(mu);
                closed = true;
            }
            cv.notify_one();
        });
        std::int64_t n = 0;
        for (;;) {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return !q.empty() || closed; });
            if (q.empty()) {
                break;
            }
            StreamEvent ev = std::move(q.front());
            q.pop_front();
            lock.unlock();
            delivered += delivered_bytes(ev);
            benchmark::DoNotOptimize(ev);
            ++n;
        }
        producer.join();
        benchmark::DoNotOptimize(n);
    }
    report_delivered(state, delivered);
}

BENCHMARK(BM_MutexCondvarDeque)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace
