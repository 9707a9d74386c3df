// Replays every committed fuzz input (fuzz/corpus/<target>/) through its target's entry point in
// the test binary: the corpora stay regression tests in every sanitizer build of `make test`
// without a separate clang build (`make fuzz` still fuzzes with libFuzzer).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

// The targets' LLVMFuzzerTestOneInput, each renamed where it is compiled into this binary
// (fuzz/corpus_tests.cmake): one program holds all six.
extern "C" {
int sluice_fuzz_sse(const std::uint8_t* data, std::size_t size);
int sluice_fuzz_transcript_line(const std::uint8_t* data, std::size_t size);
int sluice_fuzz_stream_json(const std::uint8_t* data, std::size_t size);
int sluice_fuzz_ws_op(const std::uint8_t* data, std::size_t size);
int sluice_fuzz_cursor(const std::uint8_t* data, std::size_t size);
int sluice_fuzz_http_request(const std::uint8_t* data, std::size_t size);
}

namespace {

using Target = int (*)(const std::uint8_t*, std::size_t);

// Feeds each file of fuzz/corpus/<name>/ to `target`, in name order so a failure repeats.
// A target reports a bad input by aborting (the sanitizers likewise), which fails the test
// with the input's name printed just before.
void replay(const std::string& name, Target target) {
    const std::filesystem::path dir =
        std::filesystem::path(SLUICE_SOURCE_DIR) / "fuzz/corpus" / name;
    std::vector<std::filesystem::path> inputs;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.is_regular_file()) {
            inputs.push_back(entry.path());
        }
    }
    std::sort(inputs.begin(), inputs.end());
    ASSERT_FALSE(inputs.empty()) << "no corpus in " << dir; // an empty corpus checks nothing
    for (const auto& input : inputs) {
        // Exactly the file's size, as libFuzzer hands an input over: a read one past the end
        // lands in ASan's redzone instead of a vector's spare capacity.
        const auto size = static_cast<std::size_t>(std::filesystem::file_size(input));
        const auto bytes = std::make_unique<std::uint8_t[]>(size);
        std::ifstream in(input, std::ios::binary);
        ASSERT_TRUE(
            in.read(reinterpret_cast<char*>(bytes.get()), static_cast<std::streamsize>(size)))
            << input;
        std::cerr << "replaying " << input.filename().string() << "\n" << std::flush;
        EXPECT_EQ(target(bytes.get(), size), 0) << input;
    }
}

} // namespace

TEST(FuzzCorpus, SseInputsReplayClean) {
    replay("sse", sluice_fuzz_sse);
}

TEST(FuzzCorpus, TranscriptLineInputsReplayClean) {
    replay("transcript_line", sluice_fuzz_transcript_line);
}

TEST(FuzzCorpus, StreamJsonInputsReplayClean) {
    replay("stream_json", sluice_fuzz_stream_json);
}

TEST(FuzzCorpus, WsOpInputsReplayClean) {
    replay("ws_op", sluice_fuzz_ws_op);
}

TEST(FuzzCorpus, CursorInputsReplayClean) {
    replay("cursor", sluice_fuzz_cursor);
}

TEST(FuzzCorpus, HttpRequestInputsReplayClean) {
    replay("http_request", sluice_fuzz_http_request);
}
