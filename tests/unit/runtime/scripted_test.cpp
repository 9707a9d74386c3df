// Tests of the scripted provider: replay, round selection, tool choice, errors, cancellation.
#include "support/run_async.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/providers/scripted.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
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

Collected
run(Provider& p,
    const ProviderRequest& req,
    boost::system::result<ProviderResponse>& out,
    CancellationToken cancel = {}) {
    Collected c;
    boost::asio::io_context io;
    out = sluice::test::run_async(io, [&] {
        return p.stream(req, cancel, [&](StreamEvent ev) {
            if (auto* t = std::get_if<llm::Text>(&ev)) {
                c.text += t->text;
            } else if (auto* th = std::get_if<llm::Thinking>(&ev)) {
                c.thinking += th->text;
            } else if (auto* d = std::get_if<llm::ToolUseDelta>(&ev)) {
                c.tool_json += d->delta;
            }
            c.events.push_back(std::move(ev));
        });
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
        json::object{
            {"role", "user"},
            {"content",
             json::array{
                 json::object{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "x"}}}}}};
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
    auto p = make_scripted_provider(
        R"({"rounds":[{"events":[{"text":"a"},{"error":"overloaded"}]}]})", 0);
    boost::system::result<ProviderResponse> r;
    run(*p, request_with({json::object{{"role", "user"}, {"content", "hi"}}}), r);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::provider_error);
    EXPECT_NE(p->error_message().find("overloaded"), std::string::npos);
}

TEST(ScriptedProvider, RejectsInvalidScripts) {
    EXPECT_THROW((void)make_scripted_provider("not json", 0), std::invalid_argument);
    EXPECT_THROW((void)make_scripted_provider(R"({"rounds":[]})", 0), std::invalid_argument);
    EXPECT_THROW(
        (void)make_scripted_provider(R"({"rounds":[{"events":[{"bogus":1}]}]})", 0),
        std::invalid_argument);
    ProviderConfig c;
    c.script_path = "/nonexistent/script.json";
    EXPECT_THROW((void)make_scripted_provider(c), std::invalid_argument);
}

TEST(ScriptedProvider, CancelStopsAnEndlessFloodWithCancelled) {
    auto p = make_scripted_provider(
        R"({"delay_ms": 1, "rounds":[{"events":[{"text":"x","repeat":-1}]}]})", 1);
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

TEST(ScriptedProvider, PacesWithoutBlockingTheIoContext) {
    // Two streams on ONE io_context thread: with a timer between events (not a sleep) their
    // events interleave; a blocking pacer would run the first to its end before the second.
    constexpr std::string_view PACED =
        R"({"delay_ms": 5, "rounds":[{"events":[{"text":"x","repeat":4}]}]})";
    auto a = make_scripted_provider(PACED, 1);
    auto b = make_scripted_provider(PACED, 1);
    const auto req = request_with({json::object{{"role", "user"}, {"content", "hi"}}});
    boost::asio::io_context io;
    std::string order;
    int ended = 0;
    for (auto* p : {a.get(), b.get()}) {
        const char tag = p == a.get() ? 'a' : 'b';
        boost::asio::co_spawn(
            io,
            [p, tag, &req, &order]() {
                return p->stream(req, {}, [tag, &order](StreamEvent) { order += tag; });
            },
            [&ended](
                const std::exception_ptr& e, const boost::system::result<ProviderResponse>& r) {
                EXPECT_FALSE(e);
                EXPECT_TRUE(r);
                ++ended;
            });
    }
    io.run();
    EXPECT_EQ(ended, 2);
    ASSERT_EQ(order.size(), 8U) << order;
    EXPECT_LT(order.find('b'), order.rfind('a')) << order; // b started before a ended
    EXPECT_LT(order.find('a'), order.rfind('b')) << order;
}

TEST(ScriptedProvider, MapsStopReasonsWithTheSharedMap) {
    auto p = make_scripted_provider(
        R"({"rounds":[{"events":[{"text":"x"}],"stop_reason":"model_context_window_exceeded"}]})",
        0);
    boost::system::result<ProviderResponse> r;
    (void)run(*p, request_with({json::object{{"role", "user"}, {"content", "hi"}}}), r);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->stop_reason, StopReason::max_tokens);
    EXPECT_EQ(r->stop_reason_text, "model_context_window_exceeded");
}

TEST(StopReasonFrom, MapsEveryProvidersWords) {
    const std::pair<std::string_view, StopReason> rows[] = {
        {"end_turn", StopReason::end_turn},
        {"stop_sequence", StopReason::end_turn},
        {"stop", StopReason::end_turn},
        {"tool_use", StopReason::tool_use},
        {"tool_calls", StopReason::tool_use},
        {"function_call", StopReason::tool_use},
        {"max_tokens", StopReason::max_tokens},
        {"model_context_window_exceeded", StopReason::max_tokens},
        {"length", StopReason::max_tokens},
        {"refusal", StopReason::refusal},
        {"content_filter", StopReason::refusal},
        {"pause_turn", StopReason::pause_turn},
        {"", StopReason::other},
        {"something_new", StopReason::other},
    };
    for (const auto& [word, reason] : rows) {
        EXPECT_EQ(stop_reason_from(word), reason) << word;
    }
    EXPECT_EQ(stop_reason_text(StopReason::end_turn), "end_turn");
    EXPECT_EQ(stop_reason_text(StopReason::max_tokens), "max_tokens");
    EXPECT_EQ(stop_reason_text(StopReason::other), "other");
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
