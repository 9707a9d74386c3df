// Benchmarks of the hub's durable path: appends and the turn-end sync through the writer thread,
// side by side with a plain write + fdatasync loop on the same disk.
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/seat_meta.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/io_context.hpp>

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

// ~2 KiB tool-result frames, as in conversation_bench.cpp; a prompt opens each turn.
std::vector<sluice::FramePtr> turn_frames(std::size_t n) {
    std::vector<sluice::FramePtr> out;
    const std::string text(2048, 'x');
    for (std::size_t i = 0; i < n; ++i) {
        auto f = sluice::Frame::parse(
            i == 0 ? R"({"type":"user","message":{"role":"user","content":"next step please"}})"
                   : R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result",)"
                     R"("tool_use_id":"toolu_)"
                         + std::to_string(i) + R"(","content":")" + text + R"("}]}})");
        out.push_back(*f);
    }
    return out;
}

std::string temp_dir() {
    std::string dir = (std::filesystem::temp_directory_path() / "sluice-bench-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
        return {};
    }
    return dir;
}

// What a seat does per turn, on the writer: the unsynced marker (safe_write), one append job per
// frame (the worst case: a seat batches frames that arrive while a job runs), then the turn-end
// sync: fdatasync, index records, meta.json with the high-water mark (safe_write), marker gone.
void BM_SeatTurnThroughTheWriter(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto frames = turn_frames(n);
    const auto dir = temp_dir();
    if (dir.empty()) {
        state.SkipWithError("mkdtemp");
        return;
    }
    {
        boost::asio::io_context io;
        auto tr = sluice::Transcript::open(dir + "/transcript.jsonl");
        auto t = std::make_shared<sluice::Transcript>(std::move(*tr));
        sluice::hub::Writer writer;
        sluice::hub::SeatSpec spec;
        spec.id = "s-bench";
        spec.epoch = "e-bench";
        const std::filesystem::path marker = dir + "/unsynced";
        for (auto _ : state) {
            (void)writer.submit(
                [&] { return sluice::safe_write(marker, "boot").error(); }, io.get_executor(), {});
            for (const auto& f : frames) {
                (void)writer.submit(
                    [&t, f] { return t->append(*f).error(); }, io.get_executor(), {});
            }
            (void)writer.submit(
                [&] {
                    (void)t->sync();
                    spec.published = t->frame_count();
                    (void)sluice::hub::write_meta(dir, spec);
                    ::unlink(marker.c_str());
                    return boost::system::error_code{};
                },
                io.get_executor(),
                {});
            writer.drain();
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
    }
    std::filesystem::remove_all(dir);
}

// The floor on the same disk: one write per frame and one fdatasync per turn, nothing else.
void BM_PlainWriteFdatasync(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto frames = turn_frames(n);
    const auto dir = temp_dir();
    if (dir.empty()) {
        state.SkipWithError("mkdtemp");
        return;
    }
    const int fd =
        ::open((dir + "/plain.jsonl").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    for (auto _ : state) {
        for (const auto& f : frames) {
            std::string line(f->json());
            line.push_back('\n');
            benchmark::DoNotOptimize(::write(fd, line.data(), line.size()));
        }
        benchmark::DoNotOptimize(::fdatasync(fd));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
    ::close(fd);
    std::filesystem::remove_all(dir);
}

BENCHMARK(BM_SeatTurnThroughTheWriter)->Arg(1)->Arg(10)->Arg(100)->UseRealTime();
BENCHMARK(BM_PlainWriteFdatasync)->Arg(1)->Arg(10)->Arg(100)->UseRealTime();

} // namespace
