// Provider stream throughput on the captured streams: SSE parse alone, SSE parse + JSON +
// event dispatch (the providers' sans-I/O decoders), against touching the same bytes unparsed.
#include <sluice/net/sse.hpp>
#include <sluice/runtime/providers/anthropic.hpp>
#include <sluice/runtime/providers/openai.hpp>

#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace sluice;

std::string slurp(const std::string& rel) {
    std::ifstream in(std::string(SLUICE_BENCH_FIXTURES_DIR) + "/" + rel, std::ios::binary);
    if (!in) {
        throw std::runtime_error("missing fixture " + rel);
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    if (rel.ends_with(".chunks.txt")) { // one data payload per line: add the SSE framing
        std::string framed;
        std::istringstream lines(s);
        for (std::string line; std::getline(lines, line);) {
            if (!line.empty()) {
                framed += "data: " + line + "\n\n";
            }
        }
        return framed;
    }
    if (!s.ends_with("\n\n")) {
        s += s.ends_with("\n") ? "\n" : "\n\n";
    }
    return s;
}

const std::vector<std::string>& anthropic_streams() {
    static const std::vector<std::string> streams = [] {
        std::vector<std::string> v;
        for (const char* f : {
                 "anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_basic_response.txt",
                 "anthropics_anthropic-sdk-python/"
                 "tests_lib_streaming_fixtures_tool_use_response.txt",
                 "pydantic_pydantic-ai/"
                 "tests_models_cassettes_test_anthropic_test_anthropic_model_thinking_part_stream."
                 "yaml.interaction0.sse",
                 "pydantic_pydantic-ai/"
                 "tests_models_cassettes_test_anthropic_test_anthropic_model_web_search_tool_"
                 "stream.yaml.interaction0.sse",
                 "pydantic_pydantic-ai/"
                 "tests_models_cassettes_test_anthropic_test_pause_turn_web_search_streaming_vcr."
                 "yaml.interaction0.sse",
                 "pydantic_pydantic-ai/"
                 "tests_models_cassettes_test_anthropic_test_anthropic_mcp_servers_stream.yaml."
                 "interaction0.sse",
                 "vercel_ai/"
                 "packages_anthropic_src___fixtures___anthropic-code-execution-20250825.2.chunks."
                 "txt",
             }) {
            v.push_back(slurp(f));
        }
        return v;
    }();
    return streams;
}

const std::vector<std::string>& openai_streams() {
    static const std::vector<std::string> streams = [] {
        std::vector<std::string> v;
        for (const char* f : {
                 "openai_openai-python/"
                 "inline-snapshot_external_"
                 "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin",
                 "openai_openai-python/"
                 "inline-snapshot_external_"
                 "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin",
                 "pydantic_pydantic-ai/"
                 "tests_models_cassettes_test_deepseek_test_deepseek_model_thinking_stream.yaml."
                 "interaction0.sse",
                 "vercel_ai/packages_openai_src_chat___fixtures___openai-text.chunks.txt",
                 "vercel_ai/"
                 "packages_openai-compatible_src_chat___fixtures___xai-tool-call.chunks.txt",
             }) {
            v.push_back(slurp(f));
        }
        return v;
    }();
    return streams;
}

std::int64_t total_bytes(const std::vector<std::string>& streams) {
    std::int64_t n = 0;
    for (const auto& s : streams) {
        n += static_cast<std::int64_t>(s.size());
    }
    return n;
}

// The floor: the same bytes copied chunk by chunk out of a "receive buffer", no parsing.
void read_unparsed(benchmark::State& state, const std::vector<std::string>& streams) {
    const auto chunk = static_cast<std::size_t>(state.range(0));
    std::vector<char> buffer(chunk);
    for (auto _ : state) {
        for (const auto& s : streams) {
            for (std::size_t off = 0; off < s.size(); off += chunk) {
                const auto n = std::min(chunk, s.size() - off);
                std::memcpy(buffer.data(), s.data() + off, n);
                benchmark::DoNotOptimize(buffer.data());
                benchmark::ClobberMemory();
            }
        }
    }
    state.SetBytesProcessed(state.iterations() * total_bytes(streams));
}

void sse_only(benchmark::State& state, const std::vector<std::string>& streams) {
    const auto chunk = static_cast<std::size_t>(state.range(0));
    std::vector<sse::Event> events;
    std::int64_t count = 0;
    for (auto _ : state) {
        for (const auto& s : streams) {
            sse::Parser parser;
            for (std::size_t off = 0; off < s.size(); off += chunk) {
                if (parser.feed(std::string_view(s).substr(off, chunk), events)) {
                    state.SkipWithError("parse failed");
                    return;
                }
                count += static_cast<std::int64_t>(events.size());
                events.clear();
            }
        }
    }
    state.SetBytesProcessed(state.iterations() * total_bytes(streams));
    state.SetItemsProcessed(count);
}

template <class Decode>
void decode(benchmark::State& state, const std::vector<std::string>& streams, Decode fn) {
    const auto chunk = static_cast<std::size_t>(state.range(0));
    std::int64_t events = 0;
    const runtime::EventSink sink = [&events](StreamEvent ev) {
        benchmark::DoNotOptimize(ev);
        ++events;
    };
    std::string error;
    for (auto _ : state) {
        for (const auto& s : streams) {
            auto r = fn(s, chunk, sink, error);
            if (!r) {
                state.SkipWithError(error.c_str());
                return;
            }
            benchmark::DoNotOptimize(r);
        }
    }
    state.SetBytesProcessed(state.iterations() * total_bytes(streams));
    state.SetItemsProcessed(events);
}

void BM_AnthropicReadUnparsed(benchmark::State& state) {
    read_unparsed(state, anthropic_streams());
}

void BM_AnthropicSseParse(benchmark::State& state) {
    sse_only(state, anthropic_streams());
}

void BM_AnthropicSseParseAndDispatch(benchmark::State& state) {
    decode(state, anthropic_streams(), runtime::decode_anthropic_stream);
}

void BM_OpenAiReadUnparsed(benchmark::State& state) {
    read_unparsed(state, openai_streams());
}

void BM_OpenAiSseParse(benchmark::State& state) {
    sse_only(state, openai_streams());
}

void BM_OpenAiSseParseAndDispatch(benchmark::State& state) {
    decode(state, openai_streams(), runtime::decode_openai_stream);
}

// 16 KiB: a TLS record / the client's read size; 128 B: a token-by-token trickle.
BENCHMARK(BM_AnthropicReadUnparsed)->Arg(16384)->Arg(128);
BENCHMARK(BM_AnthropicSseParse)->Arg(16384)->Arg(128);
BENCHMARK(BM_AnthropicSseParseAndDispatch)->Arg(16384)->Arg(128);
BENCHMARK(BM_OpenAiReadUnparsed)->Arg(16384)->Arg(128);
BENCHMARK(BM_OpenAiSseParse)->Arg(16384)->Arg(128);
BENCHMARK(BM_OpenAiSseParseAndDispatch)->Arg(16384)->Arg(128);

} // namespace
