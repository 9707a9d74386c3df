// Tests of the Anthropic provider, continued: malformed and early-ended streams, HTTP errors,
// cancellation, and the assembly limits that stop an endless stream.
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

TEST(AnthropicProvider, RejectsASecondMessageStartAsMalformed) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "vercel_ai/packages_anthropic_src___fixtures___spliced-message-start.chunks.txt")});
    auto provider = test::anthropic_for(stub);
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
    auto provider = test::anthropic_for(stub);
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
    auto provider = test::anthropic_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_NE(t.error.find("ended before message_stop"), std::string::npos) << t.error;
}

TEST(AnthropicProvider, ReportsDataThatIsNotJson) {
    test::StubProvider stub;
    stub.enqueue({.body = "event: message_start\ndata: {not json\n\n"});
    auto provider = test::anthropic_for(stub);
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
    auto provider = test::anthropic_for(stub);
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
    auto provider = test::anthropic_for(stub);
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
    auto provider = runtime::make_anthropic_provider(c, test::anthropic_quick_http());
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
    auto provider = test::anthropic_for(stub);
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
