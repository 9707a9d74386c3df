// Benchmarks of sluice::conversation: frame parsing, the live window's cut, transcript appends.
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/window.hpp>

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

std::string tool_result_row(std::size_t bytes, int i) {
    std::string text;
    text.reserve(bytes);
    while (text.size() < bytes) {
        text += "line " + std::to_string(text.size()) + ": \\\"quoted\\\" output\\n\\tindented ";
    }
    return R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result",)"
           R"("tool_use_id":"toolu_)"
           + std::to_string(i) + R"(","content":")" + text + R"("}]},"uuid":"u)" + std::to_string(i)
           + "\"}";
}

std::vector<sluice::FramePtr> frames(std::size_t n, std::size_t bytes) {
    std::vector<sluice::FramePtr> out;
    for (std::size_t i = 0; i < n; ++i) {
        const bool prompt = i % 10 == 0;
        auto f = sluice::Frame::parse(
            prompt ? R"({"type":"user","message":{"role":"user","content":"next step please"}})"
                   : tool_result_row(bytes, static_cast<int>(i)));
        if (f) {
            out.push_back(*f);
        }
    }
    return out;
}

void BM_FrameParse(benchmark::State& state) {
    const std::string row = tool_result_row(static_cast<std::size_t>(state.range(0)), 1);
    if (!sluice::Frame::parse(row)) {
        state.SkipWithError("the row is not JSON");
        return;
    }
    for (auto _ : state) {
        auto f = sluice::Frame::parse(row);
        benchmark::DoNotOptimize(f);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * row.size()));
}

BENCHMARK(BM_FrameParse)->Arg(1024)->Arg(64 * 1024);

void BM_WindowAppendWithCuts(benchmark::State& state) {
    const auto fs = frames(1000, 2048);
    sluice::Window w;
    std::size_t i = 0;
    for (auto _ : state) {
        auto shed = w.append(fs[i++ % fs.size()]);
        benchmark::DoNotOptimize(shed);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

BENCHMARK(BM_WindowAppendWithCuts);

// Appends frames of ~2 KiB and syncs (fdatasync + index records) at every turn end.
void BM_TranscriptAppendTurnEndSync(benchmark::State& state) {
    const auto turn = static_cast<std::size_t>(state.range(0));
    const auto fs = frames(turn * 10, 2048);
    std::string dir = "/tmp/sluice-bench-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) {
        state.SkipWithError("mkdtemp");
        return;
    }
    {
        auto t = sluice::Transcript::open(dir + "/seat.jsonl");
        std::size_t i = 0;
        for (auto _ : state) {
            benchmark::DoNotOptimize(t->append(*fs[i % fs.size()]));
            if (++i % turn == 0) {
                benchmark::DoNotOptimize(t->sync());
            }
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
        state.SetBytesProcessed(
            static_cast<std::int64_t>(state.iterations() * fs[1]->wire_bytes()));
    }
    std::filesystem::remove_all(dir);
}

BENCHMARK(BM_TranscriptAppendTurnEndSync)->Arg(1)->Arg(10)->Arg(100)->UseRealTime();

} // namespace
