// Tests of the scripted provider: replay, round selection, tool choice, errors, cancellation.
#include <sluice/core/error.hpp>
#include <sluice/runtime/scripted.hpp>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace sluice::runtime {
namespace {

namespace json = boost::json;

constexpr std::string_view TWO_ROUNDS = R"({
  "chunk_bytes": 4,
  "rounds": [
    {"events": [{"thinking": "hmm, ok", "signature": "s1"}, {"text": "héllo wörld"},
                {"tool_use": {"id": "t1", "name": "echo", "input": {"text": "x"}}}],
     "usage": {"input": 5, "output": 7}},
    {"events": [{"text": "done"}]}]})";

ProviderRequest request_with(std::vector<json::value> messages) {
    ProviderRequest r;
    r.messages = std::move(messages);
    return r;
}

struct Collected {
    std::vector<StreamEvent> events;
    std::string text;
    std::string thinking;
    std::string tool_json;
};

Collected run(Provider& p, const ProviderRequest& req, boost::system::result<ProviderResponse>& out,
              CancellationToken cancel = {}) {
    Collected c;
    out = p.stream(req, cancel, [&](StreamEvent ev) {
        if (auto* t = std::get_if<llm::Text>(&ev)) {
            c.text += t->text;
        } else if (auto* th = std::get_if<llm::Thinking>(&ev)) {
            c.thinking += th->text;
        } else if (auto* d = std::get_if<llm::ToolUseDelta>(&ev)) {
            c.tool_json += d->delta;
        }
        c.events.push_back(std::move(ev));
    });
    return c;
}

TEST(ScriptedProvider, ReplaysFirstRoundForAFreshPrompt) {
    auto p = make_scripted_provider(TWO_ROUNDS, 0);
    boost::system::result<ProviderResponse> r;
    auto c = run(*p, request_with({json::object{{"role", "user"}, {"content", "hi"}}}), r);
    ASSERT_TRUE(r);
    EXPECT_EQ(c.thinking, "hmm, ok");
    EXPECT_EQ(c.text, "héllo wörld");
    EXPECT_EQ(json::parse(c.tool_json), json::parse(R"({"text":"x"})"));
    EXPECT_EQ(r->stop_reason, StopReason::tool_use);
    EXPECT_EQ(r->usage.input, 5U);
    EXPECT_EQ(r->usage.output, 7U);
    const auto& content = r->assistant_message.at("content").as_array();
    ASSERT_EQ(content.size(), 3U);
    EXPECT_EQ(content[0].at("signature"), "s1");
    EXPECT_EQ(content[1].at("text"), "héllo wörld");
    EXPECT_EQ(content[2].at("name"), "echo");
    // Chunked at 4 bytes, never inside a UTF-8 sequence.
    for (const auto& ev : c.events) {
        if (const auto* t = std::get_if<llm::Text>(&ev)) {
            EXPECT_LE(t->text.size(), 4U);
            EXPECT_FALSE(t->text.empty());
            EXPECT_NE(static_cast<unsigned char>(t->text[0]) & 0xC0U, 0x80U);
        }
    }
    const auto start = std::find_if(c.events.begin(), c.events.end(), [](const StreamEvent& e) {
        return std::holds_alternative<llm::ToolUseStart>(e);
    });
    ASSERT_NE(start, c.events.end());
    EXPECT_EQ(std::get<llm::ToolUseStart>(*start).tool_id, "t1");
    EXPECT_TRUE(std::holds_alternative<llm::ToolUse>(c.events.back()));
}

TEST(ScriptedProvider, PicksRoundByAssistantMessagesSinceThePrompt) {
    auto p = make_scripted_provider(TWO_ROUNDS, 0);
    boost::system::result<ProviderResponse> r;
    std::vector<json::value> msgs{
        json::object{{"role", "user"}, {"content", "hi"}},
        json::object{{"role", "assistant"}, {"content", json::array{}}},
        json::object{{"role", "user"}, {"content", json::array{json::object{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "x"}}}}}};
    auto c = run(*p, request_with(msgs), r);
    ASSERT_TRUE(r);
    EXPECT_EQ(c.text, "done");
    EXPECT_EQ(r->stop_reason, StopReason::end_turn);
    // A new prompt starts the script again.
    msgs.push_back(json::object{{"role", "assistant"}, {"content", json::array{}}});
    msgs.push_back(json::object{{"role", "user"}, {"content", "again"}});
    c = run(*p, request_with(msgs), r);
    EXPECT_EQ(c.text, "héllo wörld");
}

TEST(ScriptedProvider, DefaultScriptCallsTheFirstOfferedTool) {
    auto p = make_scripted_provider(default_script(), 0);
    boost::system::result<ProviderResponse> r;
    auto req = request_with({json::object{{"role", "user"}, {"content", "hi"}}});
    req.tools.push_back(ToolSpec{"read_file", "", json::object{}});
    auto c = run(*p, req, r);
    ASSERT_TRUE(r);
    EXPECT_FALSE(c.thinking.empty());
    EXPECT_FALSE(c.text.empty());
    EXPECT_EQ(r->assistant_message.at("content").as_array().back().at("name"), "read_file");
    req.tools.clear();
    run(*p, req, r);
    EXPECT_EQ(r->assistant_message.at("content").as_array().back().at("name"), "echo");
}

TEST(ScriptedProvider, ErrorEventFailsTheStream) {
    auto p = make_scripted_provider(R"({"rounds":[{"events":[{"text":"a"},{"error":"overloaded"}]}]})", 0);
    boost::system::result<ProviderResponse> r;
    run(*p, request_with({json::object{{"role", "user"}, {"content", "hi"}}}), r);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::provider_error);
    EXPECT_NE(p->error_message().find("overloaded"), std::string::npos);
}

TEST(ScriptedProvider, RejectsInvalidScripts) {
    EXPECT_THROW((void)make_scripted_provider("not json", 0), std::invalid_argument);
    EXPECT_THROW((void)make_scripted_provider(R"({"rounds":[]})", 0), std::invalid_argument);
    EXPECT_THROW((void)make_scripted_provider(R"({"rounds":[{"events":[{"bogus":1}]}]})", 0), std::invalid_argument);
    ProviderConfig c;
    c.script_path = "/nonexistent/script.json";
    EXPECT_THROW((void)make_scripted_provider(c), std::invalid_argument);
}

TEST(ScriptedProvider, CancelStopsAnEndlessFloodWithCancelled) {
    auto p = make_scripted_provider(R"({"delay_ms": 1, "rounds":[{"events":[{"text":"x","repeat":-1}]}]})", 1);
    CancellationToken cancel;
    std::thread canceller([cancel]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        cancel.cancel();
    });
    boost::system::result<ProviderResponse> r;
    auto c = run(*p, request_with({json::object{{"role", "user"}, {"content", "hi"}}}), r, cancel);
    canceller.join();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_FALSE(c.text.empty());
}

TEST(MakeProvider, BuildsScriptedAndRejectsUnknownKinds) {
    ProviderConfig c;
    c.kind = "scripted";
    EXPECT_EQ(make_provider(c)->name(), "scripted");
    c.kind = "nonsense";
    EXPECT_THROW((void)make_provider(c), std::invalid_argument);
}

} // namespace
} // namespace sluice::runtime
