// Tests of the Anthropic provider: every captured Messages stream replayed through the loopback
// stub, plus HTTP errors, mid-stream errors, malformed streams and cancellation.
#include "anthropic_harness.hpp"
#include "support/run_async.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/providers/anthropic.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

using namespace sluice;
using namespace std::chrono_literals;
namespace json = boost::json;

struct Capture {
    const char* path;
    const char* model;
    const char* stop;
    runtime::StopReason reason;
    std::size_t text_bytes;
    std::size_t thinking_bytes;
    std::vector<std::pair<std::string, std::string>> tools; // name, input JSON
    std::uint64_t input_tokens;
    std::uint64_t output_tokens;
};

// Expected values were recomputed independently (a separate Python reading of each file),
// not copied from the fixtures README.
const std::vector<Capture>& captures() {
    using R = runtime::StopReason;
    static const std::vector<Capture> table = {
        {"anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_basic_response.txt",
         "claude-3-opus-latest",
         "end_turn",
         R::end_turn,
         12,
         0,
         {},
         11,
         6},
        {"anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_tool_use_response.txt",
         "claude-sonnet-4-20250514",
         "tool_use",
         R::tool_use,
         48,
         0,
         {{"get_weather", R"({"location":"Paris"})"}},
         377,
         65},
        {"anthropics_anthropic-sdk-python/"
         "tests_lib_streaming_fixtures_incomplete_partial_json_response.txt",
         "claude-3-7-sonnet-20250219",
         "max_tokens",
         R::max_tokens,
         135,
         0,
         {},
         450,
         124},
        {"anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_refusal_response.txt",
         "claude-opus-4-7",
         "refusal",
         R::refusal,
         0,
         0,
         {},
         20,
         0},
        {"anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_compaction_response.txt",
         "claude-opus-4-7",
         "end_turn",
         R::end_turn,
         12,
         0,
         {},
         30,
         8},
        {"anthropics_anthropic-sdk-python/tests_fixtures_fable-fallback_stream-a-toolrefusal.sse",
         "claude-fable-5",
         "refusal",
         R::refusal,
         54,
         0,
         {},
         28,
         106},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_anthropic_model_thinking_part_stream.yaml."
         "interaction0.sse",
         "claude-sonnet-4-20250514",
         "end_turn",
         R::end_turn,
         1021,
         202,
         {},
         43,
         282},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_anthropic_model_thinking_part_redacted_stream."
         "yaml.interaction0.sse",
         "claude-sonnet-4-5-20250929",
         "end_turn",
         R::end_turn,
         359,
         0,
         {},
         92,
         189},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_anthropic_model_web_search_tool_stream.yaml."
         "interaction0.sse",
         "claude-sonnet-4-20250514",
         "end_turn",
         R::end_turn,
         1346,
         405,
         {},
         22397,
         637},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_pause_turn_web_search_streaming_vcr.yaml."
         "interaction0.sse",
         "claude-sonnet-4-5-20250929",
         "pause_turn",
         R::pause_turn,
         166,
         1051,
         {},
         404500,
         943},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_anthropic_compaction_usage_with_cache_"
         "streaming.yaml.interaction0.sse",
         "claude-sonnet-4-6",
         "end_turn",
         R::end_turn,
         11,
         0,
         {},
         181,
         8},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_anthropic_mcp_servers_stream.yaml."
         "interaction0.sse",
         "claude-sonnet-4-5-20250929",
         "end_turn",
         R::end_turn,
         806,
         192,
         {},
         3042,
         354},
        {"vercel_ai/"
         "packages_anthropic_src___fixtures___anthropic-code-execution-20250825.2.chunks.txt",
         "claude-sonnet-4-5-20250929",
         "end_turn",
         R::end_turn,
         1801,
         0,
         {},
         15696,
         2479},
        {"vercel_ai/packages_anthropic_src___fixtures___anthropic-tool-no-args.chunks.txt",
         "claude-sonnet-4-5-20250929",
         "tool_use",
         R::tool_use,
         35,
         0,
         {{"updateIssueList", "{}"}},
         565,
         48},
        {"vercel_ai/packages_anthropic_src___fixtures___anthropic-refusal.chunks.txt",
         "claude-fable-5",
         "refusal",
         R::refusal,
         0,
         0,
         {},
         18,
         5},
    };
    return table;
}

TEST(AnthropicProvider, ReplaysEveryCaptureIntoTheRightEvents) {
    for (const auto& c : captures()) {
        SCOPED_TRACE(c.path);
        test::StubProvider stub;
        // Cut at odd byte boundaries so events and UTF-8 straddle chunks.
        stub.enqueue({.body = test::fixture_body(c.path), .chunk_size = 97});
        auto provider = test::anthropic_for(stub);
        const auto t = test::run_provider(*provider);
        ASSERT_TRUE(t.result) << t.error;
        const auto& r = *t.result;
        EXPECT_EQ(r.usage.model, c.model);
        EXPECT_EQ(r.stop_reason_text, c.stop);
        EXPECT_EQ(r.stop_reason, c.reason);
        EXPECT_EQ(t.text.size(), c.text_bytes);
        EXPECT_EQ(t.thinking.size(), c.thinking_bytes);
        EXPECT_EQ(r.usage.input, c.input_tokens);
        EXPECT_EQ(r.usage.output, c.output_tokens);
        ASSERT_EQ(t.uses.size(), c.tools.size());
        // A call cut off by max_tokens starts but is never used (see DropsAToolCallCut…).
        ASSERT_GE(t.starts.size(), c.tools.size());
        for (std::size_t i = 0; i < c.tools.size(); ++i) {
            EXPECT_EQ(t.uses[i].tool_name, c.tools[i].first);
            EXPECT_EQ(t.starts[i].tool_id, t.uses[i].tool_id);
            EXPECT_EQ(t.uses[i].input, json::parse(c.tools[i].second));
        }
        // The assembled message carries the same text as the previews.
        std::string assembled;
        for (const auto& b : test::blocks_of(r.assistant_message, "text")) {
            assembled += b.at("text").as_string();
        }
        EXPECT_EQ(assembled, t.text);
        EXPECT_EQ(r.assistant_message.at("role"), "assistant");
    }
}

TEST(AnthropicProvider, SendsTheMessagesRequestWithItsHeaders) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_basic_response.txt")});
    auto provider = test::anthropic_for(stub);
    runtime::ProviderRequest req;
    req.system = "be brief";
    req.max_tokens = 100;
    req.thinking_budget = 1024;
    req.tools.push_back({"read_file", "reads a file", json::parse(R"({"type":"object"})")});
    const auto t = test::run_provider(*provider, {}, req);
    ASSERT_TRUE(t.result) << t.error;
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].method, "POST");
    EXPECT_EQ(reqs[0].target, "/v1/messages");
    EXPECT_EQ(reqs[0].header("x-api-key"), "test-key");
    EXPECT_EQ(reqs[0].header("anthropic-version"), runtime::ANTHROPIC_API_VERSION);
    const auto body = json::parse(reqs[0].body).as_object();
    EXPECT_EQ(body.at("model"), "claude-test");
    EXPECT_EQ(body.at("stream"), true);
    EXPECT_EQ(body.at("system"), "be brief");
    EXPECT_EQ(body.at("thinking").at("budget_tokens"), 1024);
    EXPECT_GT(body.at("max_tokens").to_number<std::int64_t>(), 1024);
    EXPECT_EQ(body.at("tools").at(0).at("name"), "read_file");
    EXPECT_EQ(body.at("messages").at(0).at("content"), "hi");
}

TEST(AnthropicProvider, StreamsToolInputAsDeltasAndParsesItAtBlockStop) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_tool_use_response.txt"),
         .chunk_size = 1});
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    ASSERT_EQ(t.uses.size(), 1U);
    EXPECT_EQ(t.deltas.at(t.uses[0].tool_id), R"({"location": "Paris"})");
    const auto uses = test::blocks_of(t.result->assistant_message, "tool_use");
    ASSERT_EQ(uses.size(), 1U);
    EXPECT_EQ(uses[0].at("input"), json::parse(R"({"location":"Paris"})"));
}

TEST(AnthropicProvider, KeepsThinkingSignaturesForTheNextRequest) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body("pydantic_pydantic-ai/"
                                    "tests_models_cassettes_test_anthropic_test_anthropic_model_"
                                    "thinking_part_stream.yaml.interaction0.sse")});
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    const auto thinking = test::blocks_of(t.result->assistant_message, "thinking");
    ASSERT_EQ(thinking.size(), 1U);
    EXPECT_EQ(thinking[0].at("thinking").as_string(), t.thinking);
    EXPECT_GT(thinking[0].at("signature").as_string().size(), 100U);
}

TEST(AnthropicProvider, KeepsRedactedThinkingBlocks) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body("pydantic_pydantic-ai/"
                                    "tests_models_cassettes_test_anthropic_test_anthropic_model_"
                                    "thinking_part_redacted_stream.yaml.interaction0.sse")});
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    const auto redacted = test::blocks_of(t.result->assistant_message, "redacted_thinking");
    ASSERT_EQ(redacted.size(), 2U);
    EXPECT_FALSE(redacted[0].at("data").as_string().empty());
}

TEST(AnthropicProvider, AccumulatesLargeServerToolInputsWithoutRunningThem) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "vercel_ai/"
             "packages_anthropic_src___fixtures___anthropic-code-execution-20250825.2.chunks.txt"),
         .chunk_size = 4096});
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    EXPECT_TRUE(t.uses.empty()); // server tools run at the provider, not here
    const auto server = test::blocks_of(t.result->assistant_message, "server_tool_use");
    ASSERT_EQ(server.size(), 3U);
    for (const auto& b : server) {
        EXPECT_TRUE(b.at("input").is_object());
        EXPECT_FALSE(b.at("input").as_object().empty());
    }
}

TEST(AnthropicProvider, DropsAToolCallCutByMaxTokensWithANotice) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "anthropics_anthropic-sdk-python/"
             "tests_lib_streaming_fixtures_incomplete_partial_json_response.txt")});
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    EXPECT_EQ(t.result->stop_reason, runtime::StopReason::max_tokens);
    ASSERT_EQ(t.starts.size(), 1U);
    EXPECT_EQ(t.starts[0].tool_name, "make_file");
    EXPECT_TRUE(t.uses.empty());
    ASSERT_EQ(t.notices.size(), 1U);
    EXPECT_NE(t.notices[0].find("max_tokens"), std::string::npos);
    EXPECT_NE(t.notices[0].find("make_file"), std::string::npos);
    EXPECT_TRUE(test::blocks_of(t.result->assistant_message, "tool_use").empty());
}

} // namespace
