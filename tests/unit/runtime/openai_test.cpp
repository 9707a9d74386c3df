// Tests of the OpenAI Chat Completions provider: every captured Chat stream replayed through the
// loopback stub, history translation, errors in chunks and as events, HTTP errors, cancellation.
#include "provider_harness.hpp"
#include "support/run_async.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/providers/openai.hpp>

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
    o.max_attempts = 1;
    return o;
}

std::unique_ptr<runtime::Provider>
provider_for(const test::StubProvider& stub, std::string key = "sk-test") {
    runtime::ProviderConfig c;
    c.kind = "openai";
    c.base_url = stub.base_url() + "/v1";
    c.api_key = std::move(key);
    c.model = "gpt-test";
    return runtime::make_openai_provider(c, quick_http());
}

struct Capture {
    const char* path;
    const char* model;
    const char* finish;
    runtime::StopReason reason;
    std::size_t text_bytes; // content (and refusal) previews
    std::size_t thinking_bytes;
    std::vector<std::pair<std::string, std::string>> tools;
    std::uint64_t input_tokens;
    std::uint64_t output_tokens;
    std::uint64_t cached_tokens;
};

// Expected values recomputed independently (a separate Python reading of each file).
const std::vector<Capture>& captures() {
    using R = runtime::StopReason;
    static const std::vector<Capture> table = {
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin",
         "gpt-4o-2024-08-06",
         "stop",
         R::end_turn,
         159,
         0,
         {},
         14,
         30,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin",
         "gpt-4o-2024-08-06",
         "tool_calls",
         R::tool_use,
         0,
         0,
         {{"GetWeatherArgs", R"({"city":"Edinburgh","country":"GB","units":"c"})"},
          {"get_stock_price", R"({"ticker":"AAPL","exchange":"NASDAQ"})"}},
         149,
         60,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "c6aa7e397b7123c3501f25df3a05d4daf7e8ad6d61ffa406ab5361fe36a8d5b1.bin",
         "gpt-4o-2024-08-06",
         "tool_calls",
         R::tool_use,
         0,
         0,
         {{"GetWeatherArgs", R"({"city":"Edinburgh","country":"UK","units":"c"})"}},
         76,
         24,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin",
         "gpt-4o-2024-08-06",
         "length",
         R::max_tokens,
         2,
         0,
         {},
         79,
         1,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin",
         "gpt-4o-2024-08-06",
         "stop",
         R::refusal,
         44,
         0,
         {},
         79,
         11,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "a491adda08c3d4fde95f5b2ee3f60f7f745f1a56d82e62f58031cc2add502380.bin",
         "gpt-4o-2024-08-06",
         "stop",
         R::end_turn,
         53,
         0,
         {},
         79,
         42,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "83b060bae42eb41c4f1edbb7c1542b954b37d9dfd1910b964ddebc9677e6ae85.bin",
         "gpt-4o-2024-08-06",
         "stop",
         R::end_turn,
         4,
         0,
         {},
         9,
         2,
         0},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_openai_test_openai_moderation_stream.yaml.interaction0.sse",
         "gpt-5-2025-08-07",
         "stop",
         R::end_turn,
         6,
         0,
         {},
         13,
         11,
         0},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_openai_test_run_stream_sync_streams_real_model.yaml."
         "interaction0.sse",
         "gpt-4o-mini-2024-07-18",
         "tool_calls",
         R::tool_use,
         0,
         0,
         {{"get_capital", R"({"country":"UK"})"}},
         53,
         15,
         0},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_deepseek_test_deepseek_model_thinking_stream.yaml."
         "interaction0.sse",
         "deepseek-reasoner",
         "stop",
         R::end_turn,
         43,
         882,
         {},
         6,
         212,
         0},
        {"vercel_ai/packages_openai_src_chat___fixtures___openai-text.chunks.txt",
         "gpt-4.1-nano-2025-04-14",
         "stop",
         R::end_turn,
         1730,
         0,
         {},
         16,
         300,
         0},
        {"vercel_ai/packages_openai-compatible_src_chat___fixtures___xai-tool-call.chunks.txt",
         "grok-3-mini",
         "tool_calls",
         R::tool_use,
         0,
         1069,
         {{"weather", R"({"location":"San Francisco"})"}},
         307,
         26,
         306},
    };
    return table;
}

TEST(OpenAiProvider, ReplaysEveryCaptureIntoTheRightEvents) {
    for (const auto& c : captures()) {
        SCOPED_TRACE(c.path);
        test::StubProvider stub;
        stub.enqueue({.body = test::fixture_body(c.path), .chunk_size = 61});
        auto provider = provider_for(stub);
        const auto t = test::run_provider(*provider);
        ASSERT_TRUE(t.result) << t.error;
        const auto& r = *t.result;
        EXPECT_EQ(r.usage.model, c.model);
        EXPECT_EQ(r.stop_reason_text, c.finish);
        EXPECT_EQ(r.stop_reason, c.reason);
        EXPECT_EQ(t.text.size(), c.text_bytes);
        EXPECT_EQ(t.thinking.size(), c.thinking_bytes);
        EXPECT_EQ(r.usage.input, c.input_tokens);
        EXPECT_EQ(r.usage.output, c.output_tokens);
        EXPECT_EQ(r.usage.cache_read, c.cached_tokens);
        ASSERT_EQ(t.uses.size(), c.tools.size());
        ASSERT_EQ(t.starts.size(), c.tools.size());
        const auto blocks = test::blocks_of(r.assistant_message, "tool_use");
        ASSERT_EQ(blocks.size(), c.tools.size());
        for (std::size_t i = 0; i < c.tools.size(); ++i) {
            EXPECT_EQ(t.uses[i].tool_name, c.tools[i].first);
            EXPECT_EQ(t.uses[i].input, json::parse(c.tools[i].second));
            EXPECT_EQ(t.starts[i].tool_id, t.uses[i].tool_id);
            EXPECT_FALSE(t.uses[i].tool_id.empty());
            // The streamed fragments add up to the arguments that were parsed.
            EXPECT_EQ(json::parse(t.deltas.at(t.uses[i].tool_id)), t.uses[i].input);
            EXPECT_EQ(blocks[i].at("input"), t.uses[i].input);
        }
    }
}

TEST(OpenAiProvider, SendsAChatCompletionsRequestWithBearerAuth) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "openai_openai-python/"
             "inline-snapshot_external_"
             "83b060bae42eb41c4f1edbb7c1542b954b37d9dfd1910b964ddebc9677e6ae85.bin")});
    auto provider = provider_for(stub);
    runtime::ProviderRequest req;
    req.system = "sys";
    req.max_tokens = 77;
    req.tools.push_back({"bash", "runs a command", json::parse(R"({"type":"object"})")});
    const auto t = test::run_provider(*provider, {}, req);
    ASSERT_TRUE(t.result) << t.error;
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].target, "/v1/chat/completions");
    EXPECT_EQ(reqs[0].header("authorization"), "Bearer sk-test");
    const auto body = json::parse(reqs[0].body).as_object();
    EXPECT_EQ(body.at("model"), "gpt-test");
    EXPECT_EQ(body.at("stream"), true);
    EXPECT_EQ(body.at("stream_options").at("include_usage"), true);
    EXPECT_EQ(body.at("max_tokens"), 77);
    EXPECT_EQ(body.at("tools").at(0).at("function").at("name"), "bash");
    EXPECT_EQ(body.at("messages").at(0).at("role"), "system");
    EXPECT_EQ(body.at("messages").at(1).at("content"), "hi");
}

TEST(OpenAiProvider, SendsNoAuthorizationWithoutAKey) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body(
             "openai_openai-python/"
             "inline-snapshot_external_"
             "83b060bae42eb41c4f1edbb7c1542b954b37d9dfd1910b964ddebc9677e6ae85.bin")});
    runtime::ProviderConfig c;
    c.base_url = stub.base_url();
    auto provider = runtime::make_openai_provider(c, quick_http());
    // A local compatible server: the environment's key (if any) would be used, so only check
    // the header when none is set.
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    if (std::getenv("OPENAI_API_KEY") == nullptr) { // NOLINT(concurrency-mt-unsafe)
        EXPECT_EQ(stub.requests().at(0).header("authorization"), "");
    }
}

TEST(OpenAiProvider, TranslatesAnthropicHistoryIntoChatMessages) {
    const std::vector<json::value> history = {
        json::parse(R"({"role":"user","content":"list files"})"),
        json::parse(R"({"role":"assistant","content":[
            {"type":"thinking","thinking":"hmm","signature":"sig"},
            {"type":"text","text":"Running ls."},
            {"type":"tool_use","id":"call_1","name":"bash","input":{"cmd":"ls"}},
            {"type":"tool_use","id":"call_2","name":"read_file","input":{"path":"a"}}]})"),
        json::parse(R"({"role":"user","content":[
            {"type":"tool_result","tool_use_id":"call_1","content":"a\nb"},
            {"type":"tool_result","tool_use_id":"call_2","content":[{"type":"text",
            "text":"no such file"}],"is_error":true},
            {"type":"text","text":"thanks"}]})"),
    };
    const auto out = runtime::chat_messages_from_anthropic("be brief", history);
    ASSERT_EQ(out.size(), 6U);
    EXPECT_EQ(out[0], json::parse(R"({"role":"system","content":"be brief"})"));
    EXPECT_EQ(out[1], json::parse(R"({"role":"user","content":"list files"})"));
    EXPECT_EQ(out[2].at("role"), "assistant");
    EXPECT_EQ(out[2].at("content"), "Running ls.");
    ASSERT_EQ(out[2].at("tool_calls").as_array().size(), 2U);
    EXPECT_EQ(out[2].at("tool_calls").at(0).at("id"), "call_1");
    EXPECT_EQ(out[2].at("tool_calls").at(0).at("type"), "function");
    EXPECT_EQ(
        json::parse(out[2].at("tool_calls").at(0).at("function").at("arguments").as_string()),
        json::parse(R"({"cmd":"ls"})"));
    EXPECT_EQ(out[3], json::parse(R"({"role":"tool","tool_call_id":"call_1","content":"a\nb"})"));
    EXPECT_EQ(
        out[4],
        json::parse(R"({"role":"tool","tool_call_id":"call_2","content":"Error: no such file"})"));
    EXPECT_EQ(out[5], json::parse(R"({"role":"user","content":"thanks"})"));
}

TEST(OpenAiProvider, EndsWithAnErrorCarriedInsideAChunk) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body("pydantic_pydantic-ai/"
                                    "tests_models_cassettes_test_openrouter_test_openrouter_stream_"
                                    "error.yaml.interaction0.sse")});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::provider_error);
    EXPECT_EQ(t.error, "openai: stream error: Token limit reached");
    EXPECT_EQ(t.thinking.size(), 42U); // the reasoning before the error was still streamed
}

TEST(OpenAiProvider, EndsWithAnErrorOnAnErrorEvent) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = test::fixture_body("pydantic_pydantic-ai/"
                                    "tests_models_cassettes_test_groq_test_tool_use_failed_error_"
                                    "streaming.yaml.interaction0.sse")});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::provider_error);
    EXPECT_NE(t.error.find("openai: stream error: Tool call validation failed"), std::string::npos)
        << t.error;
    EXPECT_NE(t.error.find("(invalid_request_error)"), std::string::npos) << t.error;
    EXPECT_EQ(t.error.find('\n'), std::string::npos);
    EXPECT_EQ(t.thinking.size(), 412U);
}

TEST(OpenAiProvider, DropsToolCallsCutByTheLengthLimitWithANotice) {
    test::StubProvider stub;
    stub.enqueue(
        {.body = "data: "
                 "{\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
                 "0,\"id\":\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\": "
                 "\\\"l\"}}]}}]}\n\n"
                 "data: "
                 "{\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
                 "\"length\"}]}\n\n"
                 "data: [DONE]\n\n"});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_TRUE(t.result) << t.error;
    EXPECT_EQ(t.result->stop_reason, runtime::StopReason::max_tokens);
    EXPECT_EQ(t.starts.size(), 1U);
    EXPECT_TRUE(t.uses.empty());
    ASSERT_EQ(t.notices.size(), 1U);
    EXPECT_NE(t.notices[0].find("bash"), std::string::npos);
}

TEST(OpenAiProvider, ReportsAStreamThatEndsBeforeFinishing) {
    test::StubProvider stub;
    stub.enqueue(
        {.body =
             "data: "
             "{\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_EQ(t.text, "Hi");
    EXPECT_NE(t.error.find("openai: malformed stream"), std::string::npos) << t.error;
}

TEST(OpenAiProvider, ReportsABodyThatIsNotAnEventStream) {
    test::StubProvider stub;
    stub.enqueue(
        {.content_type = "application/json", .body = "{\"choices\":[]}", .content_length = true});
    auto provider = provider_for(stub);
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::protocol_error);
    EXPECT_NE(t.error.find("expected text/event-stream, got application/json"), std::string::npos)
        << t.error;
}

TEST(OpenAiProvider, ReportsABadKeyAndAnUnknownModel) {
    test::StubProvider stub;
    stub.enqueue(
        {.status = 401,
         .content_type = "application/json",
         .body = R"({"error":{"message":"Incorrect API key provided: sk-test.",)"
                 R"("type":"invalid_request_error","code":"invalid_api_key"}})",
         .content_length = true});
    stub.enqueue(
        {.status = 404,
         .content_type = "application/json",
         .body = R"({"error":{"message":"The model `gpt-nope` does not exist or you do not have )"
                 R"(access to it.","type":"invalid_request_error","code":"model_not_found"}})",
         .content_length = true});
    auto provider = provider_for(stub);
    const auto bad_key = test::run_provider(*provider);
    ASSERT_FALSE(bad_key.result);
    EXPECT_EQ(bad_key.result.error(), errc::unauthorized);
    EXPECT_NE(
        bad_key.error.find("openai: authentication failed (HTTP 401): Incorrect API key"),
        std::string::npos)
        << bad_key.error;
    EXPECT_NE(bad_key.error.find("OPENAI_API_KEY"), std::string::npos);
    const auto bad_model = test::run_provider(*provider);
    ASSERT_FALSE(bad_model.result);
    EXPECT_EQ(bad_model.result.error(), errc::not_found);
    EXPECT_NE(bad_model.error.find("The model `gpt-nope` does not exist"), std::string::npos)
        << bad_model.error;
}

TEST(OpenAiProvider, ReportsAnUnreachableProvider) {
    std::uint16_t port = 0;
    {
        test::StubProvider gone;
        port = gone.port();
    }
    runtime::ProviderConfig c;
    c.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    auto provider = runtime::make_openai_provider(c, quick_http());
    const auto t = test::run_provider(*provider);
    ASSERT_FALSE(t.result);
    EXPECT_EQ(t.result.error(), errc::io_error);
    EXPECT_NE(t.error.find("openai: cannot reach"), std::string::npos) << t.error;
}

TEST(OpenAiProvider, CancelMidStreamReturnsPromptlyAndClosesTheStream) {
    test::StubProvider stub;
    stub.enqueue({.pace = 1ms, .flood = test::StubFlood::openai});
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
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
}

TEST(OpenAiProvider, DecodesACaptureWithoutANetworkAtAnyChunkSize) {
    const auto body =
        test::fixture_body("openai_openai-python/"
                           "inline-snapshot_external_"
                           "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin");
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{13}, body.size()}) {
        std::vector<llm::ToolUse> uses;
        std::string error;
        const auto r = runtime::decode_openai_stream(
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
        EXPECT_EQ(uses[0].tool_name, "GetWeatherArgs");
    }
    std::string error;
    EXPECT_FALSE(runtime::decode_openai_stream(
        "data: {oops\n\n", 4, [](StreamEvent) {}, error));
    EXPECT_NE(error.find("malformed stream"), std::string::npos);
}

TEST(OpenAiProvider, StopsContentOrArgumentsPastTheAssemblyLimit) {
    const std::string piece(16 * 1024, 'x');
    for (const bool args : {false, true}) {
        std::string body;
        const auto n = runtime::ASSEMBLED_BLOCK_MAX_BYTES / piece.size() + 2;
        for (std::size_t i = 0; i < n; ++i) {
            body += args ? "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
                           "\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\","
                           "\"arguments\":\""
                               + piece + "\"}}]}}]}\n\n"
                         : "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece
                               + "\"}}]}\n\n";
        }
        body += "data: [DONE]\n\n";
        std::string error;
        const auto r = runtime::decode_openai_stream(
            body, body.size(), [](StreamEvent) {}, error);
        ASSERT_FALSE(r) << args;
        EXPECT_EQ(r.error(), errc::payload_too_large);
        EXPECT_NE(error.find("assembly limit"), std::string::npos) << error;
    }
}

} // namespace
