// The seed's flood tests, end to end through the anthropic provider and a loopback stub server.
#include "support/io_thread.hpp"
#include "support/stub_provider.hpp"

#include <sluice/core/relay.hpp>
#include <sluice/runtime/providers/anthropic.hpp>
#include <sluice/runtime/runtime.hpp>
#include <sluice/runtime/tools/tools.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using sluice::test::StubFlood;
using sluice::test::StubProvider;
using sluice::test::StubResponse;
using namespace std::chrono_literals;

// Under ASSEMBLED_BLOCK_MAX_BYTES (one block may not assemble more; the turn would end there),
// and twelve times the relay's retained budget.
constexpr std::uint64_t FLOOD_BYTES = 3U * 1024 * 1024;

std::unique_ptr<Runtime> anthropic_runtime(
    boost::asio::any_io_executor ex,
    const StubProvider& stub,
    std::vector<std::string> tools = {}) {
    RuntimeConfig c;
    c.provider.kind = "anthropic";
    c.provider.base_url = stub.base_url();
    c.provider.api_key = "test-key";
    c.model = "claude-test";
    c.tools = std::move(tools);
    auto provider = std::shared_ptr<Provider>(make_anthropic_provider(c.provider));
    return std::make_unique<Runtime>(
        std::move(ex), c, provider, make_tools(c.tools, ToolOptions{}));
}

std::vector<json::value> prompt() {
    return {json::object{{"role", "user"}, {"content", "flood me"}}};
}

StubResponse flood(std::size_t delta_bytes = 1024) {
    StubResponse r;
    r.flood = StubFlood::anthropic;
    r.flood_delta_bytes = delta_bytes;
    return r;
}

TEST(RuntimeFlood, ACallerThatNeverReadsKeepsRetainedWithinBudget) {
    StubProvider stub;
    stub.enqueue(flood());
    sluice::test::IoThread io;
    auto rt = anthropic_runtime(io.executor(), stub);
    auto rx = rt->run_stream_with_messages(prompt(), {});
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (rx.counters().produced < FLOOD_BYTES && std::chrono::steady_clock::now() < deadline) {
        EXPECT_LE(rx.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
        std::this_thread::sleep_for(5ms);
    }
    const auto c = rx.counters();
    ASSERT_GE(c.produced, FLOOD_BYTES); // 3 MiB of delta text went into the relay, unread
    EXPECT_LE(c.peak_retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    EXPECT_EQ(c.produced, c.forwarded + c.dropped + c.retained);

    // The caller goes away: the relay ends, the provider connection closes, production stops.
    rx = RelayReceiver{};
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
    EXPECT_TRUE(rt->wait_idle(10s));
    const auto sent = stub.bytes_sent();
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(stub.bytes_sent(), sent);
}

TEST(RuntimeFlood, ASlowConsumerStaysWithinBudget) {
    StubProvider stub;
    stub.enqueue(flood());
    sluice::test::IoThread io;
    auto rt = anthropic_runtime(io.executor(), stub);
    auto rx = rt->run_stream_with_messages(prompt(), {});
    std::size_t received = 0;
    for (int i = 0; i < 20; ++i) {
        std::this_thread::sleep_for(100ms);
        if (rx.next_for(1s)) {
            ++received;
        }
        EXPECT_LE(rx.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    }
    EXPECT_GT(received, 0U);
    const auto c = rx.counters();
    EXPECT_LE(c.peak_retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    EXPECT_GT(c.produced, RELAY_DELTA_RETAINED_BUDGET_BYTES); // the budget really was tested
    rx = RelayReceiver{};
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
    EXPECT_TRUE(rt->wait_idle(10s));
}

std::string sse(std::initializer_list<std::string_view> events) {
    std::string out;
    for (auto e : events) {
        const auto v = json::parse(e);
        out += "event: " + std::string(v.at("type").as_string()) + "\ndata: " + std::string(e)
               + "\n\n";
    }
    return out;
}

TEST(RuntimeFlood, TwoRoundToolTurnThroughTheAnthropicProvider) {
    StubProvider stub;
    StubResponse first;
    first.body = sse(
        {R"({"type":"message_start","message":{"id":"msg_1","type":"message",)"
         R"("role":"assistant","model":"claude-test","content":[],"stop_reason":null,)"
         R"("usage":{"input_tokens":10,"output_tokens":1}}})",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta",)"
         R"("text":"Running it."}})",
         R"({"type":"content_block_stop","index":0})",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use",)"
         R"("id":"toolu_01","name":"bash","input":{}}})",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
         R"("partial_json":"{\"command\": \"echo fr"}})",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
         R"("partial_json":"om-bash\"}"}})",
         R"({"type":"content_block_stop","index":1})",
         R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},)"
         R"("usage":{"output_tokens":20}})",
         R"({"type":"message_stop"})"});
    first.chunk_size = 37;
    StubResponse second;
    second.body = sse(
        {R"({"type":"message_start","message":{"id":"msg_2","type":"message",)"
         R"("role":"assistant","model":"claude-test","content":[],"stop_reason":null,)"
         R"("usage":{"input_tokens":30,"output_tokens":1}}})",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta",)"
         R"("text":"It printed from-bash."}})",
         R"({"type":"content_block_stop","index":0})",
         R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
         R"("usage":{"output_tokens":7}})",
         R"({"type":"message_stop"})"});
    stub.enqueue(first);
    stub.enqueue(second);
    sluice::test::IoThread io;
    auto rt = anthropic_runtime(io.executor(), stub, {"bash"});
    auto rx = rt->run_stream_with_messages(prompt(), {});
    std::string text;
    std::vector<llm::ToolResult> results;
    std::vector<llm::ToolUse> uses;
    bool done = false;
    std::optional<session::Error> error;
    while (auto ev = rx.next()) {
        if (const auto* t = std::get_if<llm::Text>(&*ev)) {
            text += t->text;
        } else if (const auto* r = std::get_if<llm::ToolResult>(&*ev)) {
            results.push_back(*r);
        } else if (const auto* u = std::get_if<llm::ToolUse>(&*ev)) {
            uses.push_back(*u);
        } else if (const auto* e = std::get_if<session::Error>(&*ev)) {
            error = *e;
        } else if (std::holds_alternative<session::Done>(*ev)) {
            done = true;
        }
    }
    ASSERT_FALSE(error) << error->message;
    EXPECT_TRUE(done);
    ASSERT_EQ(uses.size(), 1U);
    EXPECT_EQ(uses[0].input, json::parse(R"({"command":"echo from-bash"})"));
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].tool_id, "toolu_01");
    EXPECT_EQ(results[0].result, "from-bash\n");
    EXPECT_EQ(text, "Running it.It printed from-bash.");
    // The second request carried the tool call and its result back to the model.
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 2U);
    const auto body = json::parse(reqs[1].body);
    const auto& msgs = body.at("messages").as_array();
    ASSERT_EQ(msgs.size(), 3U);
    EXPECT_EQ(msgs[1].at("role"), "assistant");
    EXPECT_EQ(msgs[2].at("content").as_array()[0].at("type"), "tool_result");
    EXPECT_EQ(msgs[2].at("content").as_array()[0].at("tool_use_id"), "toolu_01");
    EXPECT_EQ(reqs[1].header("x-api-key"), "test-key");
}

} // namespace
} // namespace sluice::runtime
