// Runtime loop benchmark: deltas/s from the scripted provider (pace 0) through the turn loop and
// relay to a consumer.
#include <sluice/core/relay.hpp>
#include <sluice/runtime/providers/scripted.hpp>
#include <sluice/runtime/runtime.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <thread>

namespace {

namespace json = boost::json;
using namespace sluice;

// One turn whose single response streams `deltas` text deltas of `bytes` bytes each.
std::string flood_script(std::int64_t deltas, std::size_t bytes) {
    return R"({"rounds":[{"events":[{"text":")" + std::string(bytes, 'x') + R"(","repeat":)"
           + std::to_string(deltas) + "}]}]}";
}

// End to end: the turn coroutine on an io_context thread → relay (bounded, lossy) → this thread
// consuming every event.
// Reports produced deltas/s and bytes/s, and the share of preview bytes the relay dropped
// (non-zero only when the consumer falls behind and the relay coalesces/drops).
void BM_RuntimeLoopDeltas(benchmark::State& state) {
    const auto deltas = state.range(0);
    const auto bytes = static_cast<std::size_t>(state.range(1));
    runtime::RuntimeConfig config;
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::thread io_thread([&io] { io.run(); });
    auto rt = std::make_unique<runtime::Runtime>(
        io.get_executor(),
        config,
        std::shared_ptr<runtime::Provider>(
            runtime::make_scripted_provider(flood_script(deltas, bytes), 0)),
        std::vector<std::shared_ptr<runtime::Tool>>{});
    std::uint64_t received_events = 0;
    std::uint64_t forwarded = 0;
    std::uint64_t dropped = 0;
    for (auto _ : state) {
        std::vector<json::value> msgs{json::object{{"role", "user"}, {"content", "go"}}};
        auto rx = rt->run_stream_with_messages(std::move(msgs), CancellationToken{});
        while (auto ev = rx.next()) {
            ++received_events;
            benchmark::DoNotOptimize(*ev);
        }
        const auto c = rx.counters();
        forwarded += c.forwarded;
        dropped += c.dropped;
    }
    rt.reset();
    work.reset();
    io_thread.join();
    const auto produced = static_cast<std::int64_t>(state.iterations()) * deltas;
    state.SetItemsProcessed(produced);
    state.SetBytesProcessed(produced * static_cast<std::int64_t>(bytes));
    state.counters["events_received"] = benchmark::Counter(
        static_cast<double>(received_events), benchmark::Counter::kAvgIterations);
    state.counters["dropped_share"] =
        forwarded + dropped == 0
            ? 0.0
            : static_cast<double>(dropped) / static_cast<double>(forwarded + dropped);
}

BENCHMARK(BM_RuntimeLoopDeltas)
    ->Args({100'000, 16})
    ->Args({100'000, 64})
    ->Args({20'000, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
