// Tests of the Anthropic provider: every captured Messages stream replayed through the loopback
// stub, plus HTTP errors, mid-stream errors, malformed streams and cancellation.
#include "provider_harness.hpp"
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

transport::HttpOptions quick_http() {
    transport::HttpOptions o;
    o.proxy = "";
    o.max_attempts = 2;
    o.backoff_initial = 1ms;
    o.backoff_max = 2ms;
    return o;
}

std::unique_ptr<runtime::Provider> provider_for(const test::StubProvider& stub) {
    runtime::ProviderConfig c;
    c.kind = "anthropic";
    c.base_url = stub.base_url();
    c.api_key = "test-key";
    c.model = "claude-test";
    return runtime::make_anthropic_provider(c, quick_http());
}

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
        auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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
    auto provider = provider_for(stub);
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

TEST(AnthropicProvider, RejectsASecondMessageStartAsMalformed) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "vercel_ai/packages_anthropic_src___fixtures___spliced-message-start.chunks.txt")});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_NE(t.error.find("malformed stream"), std::string::npos) << t.error;
}

TEST(AnthropicProvider, EndsWithAnErrorOnAMidStreamErrorEvent) {
    test::StubProvider stub;
    std::string body = "event: message_start\ndata: "
                       "{\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{"
                       "\"input_tokens\":1}}}\n\n"
                       "event: content_block_start\ndata: "
                       "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                       "\"text\",\"text\":\"\"}}\n\n"
                       "event: content_block_delta\ndata: "
                       "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_"
                       "delta\",\"text\":\"Hel\"}}\n\n"
                       "event: error\ndata: "
                       "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
                       "\"Overloaded\"}}\n\n";
    stub.enqueue({.body = body});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::provider_error);
    EXPECT_EQ(t.text, "Hel");
    EXPECT_EQ(t.error, "anthropic: stream error: Overloaded (overloaded_error)");
}

TEST(AnthropicProvider, ReportsAStreamThatEndsEarly) {
    test::StubProvider stub;
    auto body = test::fixture_body(
        "anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_basic_response.txt");
    body.resize(body.find("event: message_delta"));
    stub.enqueue({.body = body});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_NE(t.error.find("ended before message_stop"), std::string::npos) << t.error;
}

TEST(AnthropicProvider, ReportsDataThatIsNotJson) {
    test::StubProvider stub;
    stub.enqueue({.body = "event: message_start\ndata: {not json\n\n"});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_NE(t.error.find("anthropic: malformed stream"), std::string::npos) << t.error;
}

TEST(AnthropicProvider, ReportsABadKeyClearly) {
    test::StubProvider stub;
    stub.enqueue(
        {.status = 401,
         .content_type = "application/json",
         .body = R"({"type":"error","error":{"type":"authentication_error",)"
                 R"("message":"invalid x-api-key"}})",
         .content_length = true});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::unauthorized);
    EXPECT_EQ(
        t.error,
        "anthropic: authentication failed (HTTP 401): invalid x-api-key (authentication_error); "
        "check ANTHROPIC_API_KEY");
}

TEST(AnthropicProvider, ReportsAnUnknownModelWithTheProvidersMessage) {
    test::StubProvider stub;
    stub.enqueue(
        {.status = 404,
         .content_type = "application/json",
         .body = R"({"type":"error","error":{"type":"not_found_error",)"
                 R"("message":"model: claude-nope"}})",
         .content_length = true});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::not_found);
    EXPECT_NE(t.error.find("HTTP 404"), std::string::npos);
    EXPECT_NE(t.error.find("model: claude-nope"), std::string::npos) << t.error;
    EXPECT_EQ(t.error.find('\n'), std::string::npos);
}

TEST(AnthropicProvider, ReportsAnUnreachableProvider) {
    std::uint16_t port = 0;
    {
        test::StubProvider gone;
        port = gone.port();
    }
    runtime::ProviderConfig c;
    c.base_url = "http://127.0.0.1:" + std::to_string(port);
    c.api_key = "k";
    auto provider = runtime::make_anthropic_provider(c, quick_http());
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::io_error);
    EXPECT_NE(t.error.find("anthropic: cannot reach http://127.0.0.1:"), std::string::npos)
        << t.error;
    EXPECT_EQ(t.notices.size(), 1U); // the one retry was announced
}

TEST(AnthropicProvider, CancelMidStreamReturnsPromptlyAndClosesTheStream) {
    test::StubProvider stub;
    stub.enqueue({.pace = 1ms, .flood = test::StubFlood::anthropic});
    auto provider = provider_for(stub);
    CancellationToken cancel;
    std::atomic<std::size_t> texts{0};
    runtime::ProviderRequest req;
    req.messages.push_back(json::object{{"role", "user"}, {"content", "go"}});
    std::thread canceller([&] {
        while (texts.load() < 50) {
            std::this_thread::sleep_for(1ms);
        }
        cancel.cancel();
    });
    boost::asio::io_context io;
    const auto r = sluice::test::run_async(io, [&] {
        return provider->stream(req, cancel, [&](StreamEvent ev) {
            if (std::holds_alternative<llm::Text>(ev)) {
                ++texts;
            }
        });
    });
    canceller.join();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_EQ(provider->error_message(), "cancelled");
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
}

TEST(AnthropicProvider, RefusesToStartWithoutAKey) {
    runtime::ProviderConfig c;
    c.base_url = "http://127.0.0.1:9";
    if (std::getenv("ANTHROPIC_API_KEY") == nullptr) { // NOLINT(concurrency-mt-unsafe)
        EXPECT_THROW((void)runtime::make_anthropic_provider(c), std::invalid_argument);
    }
    c.api_key = "k";
    EXPECT_NO_THROW((void)runtime::make_anthropic_provider(c));
}

TEST(AnthropicProvider, DecodesACaptureWithoutANetworkAtAnyChunkSize) {
    const auto body = test::fixture_body(
        "anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_tool_use_response.txt");
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{13}, body.size()}) {
        std::vector<llm::ToolUse> uses;
        std::string error;
        const auto r = runtime::decode_anthropic_stream(
            body,
            chunk,
            [&](StreamEvent ev) {
                if (auto* u = std::get_if<llm::ToolUse>(&ev)) {
                    uses.push_back(*u);
                }
            },
            error);
        ASSERT_TRUE(r) << error;
        EXPECT_EQ(r->stop_reason, runtime::StopReason::tool_use);
        ASSERT_FALSE(uses.empty());
        EXPECT_EQ(uses[0].tool_name, "get_weather");
    }
    std::string error;
    EXPECT_FALSE(runtime::decode_anthropic_stream(
        "data: {oops\n\n", 4, [](StreamEvent) {}, error));
    EXPECT_NE(error.find("malformed stream"), std::string::npos);
}

TEST(AnthropicProvider, StopsABlockOrToolInputPastTheAssemblyLimit) {
    // One block growing past ASSEMBLED_BLOCK_MAX_BYTES: the response fails with a clear error
    // instead of assembling without bound (an endless stream).
    const std::string piece(16 * 1024, 'x');
    for (const std::string kind : {"text", "tool"}) {
        std::string body =
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":"
            "\"m\",\"usage\":{}}}\n\n";
        body += kind == "text"
                    ? "event: content_block_start\ndata: {\"type\":\"content_block_start\","
                      "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
                    : "event: content_block_start\ndata: {\"type\":\"content_block_start\","
                      "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\","
                      "\"name\":\"bash\",\"input\":{}}}\n\n";
        const std::string delta =
            kind == "text" ? "{\"type\":\"text_delta\",\"text\":\"" + piece + "\"}"
                           : "{\"type\":\"input_json_delta\",\"partial_json\":\"" + piece + "\"}";
        const auto n = runtime::ASSEMBLED_BLOCK_MAX_BYTES / piece.size() + 2;
        for (std::size_t i = 0; i < n; ++i) {
            body += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
                    "\"index\":0,\"delta\":"
                    + delta + "}\n\n";
        }
        std::string error;
        std::size_t texts = 0;
        const auto r = runtime::decode_anthropic_stream(
            body,
            body.size(),
            [&](StreamEvent ev) { texts += std::holds_alternative<llm::Text>(ev) ? 1U : 0U; },
            error);
        ASSERT_FALSE(r) << kind;
        EXPECT_EQ(r.error(), errc::payload_too_large) << kind;
        EXPECT_NE(error.find("assembly limit"), std::string::npos) << error;
        EXPECT_LE(texts * piece.size(), runtime::ASSEMBLED_BLOCK_MAX_BYTES) << kind;
    }
}

TEST(AnthropicProvider, StopsAnEndlessRunOfBlocksAtTheMessageLimitAndNamesIt) {
    // Blocks each under ASSEMBLED_BLOCK_MAX_BYTES, together past ASSEMBLED_MESSAGE_MAX_BYTES:
    // the failure names the message limit (it named the block limit's number before).
    const std::string piece(64 * 1024, 'x');
    const std::size_t per_block = runtime::ASSEMBLED_BLOCK_MAX_BYTES / 2 / piece.size();
    const std::size_t blocks =
        runtime::ASSEMBLED_MESSAGE_MAX_BYTES / (per_block * piece.size()) + 2;
    std::string body =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":"
        "\"m\",\"usage\":{}}}\n\n";
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::string index = std::to_string(b);
        body += "event: content_block_start\ndata: {\"type\":\"content_block_start\","
                "\"index\":"
                + index + ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
        for (std::size_t i = 0; i < per_block; ++i) {
            body += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
                    "\"index\":"
                    + index + ",\"delta\":{\"type\":\"text_delta\",\"text\":\"" + piece
                    + "\"}}\n\n";
        }
    }
    std::string error;
    const auto r = runtime::decode_anthropic_stream(
        body, body.size(), [](StreamEvent) {}, error);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::payload_too_large);
    EXPECT_NE(error.find("the message (all its blocks)"), std::string::npos) << error;
    EXPECT_NE(
        error.find(
            std::to_string(runtime::ASSEMBLED_MESSAGE_MAX_BYTES)
            + " bytes, "
              "ASSEMBLED_MESSAGE_MAX_BYTES"),
        std::string::npos)
        << error;
}

} // namespace
