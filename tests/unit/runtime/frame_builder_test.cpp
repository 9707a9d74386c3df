// Tests of FrameBuilder: Claude Code stream-json rows from a turn's events, and rows → history.
#include <sluice/runtime/frame_builder.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace sluice::runtime {
namespace {

namespace json = boost::json;

session::MessageHistory history(std::vector<json::value> msgs) {
    auto v = std::make_shared<std::vector<session::HistoryMessage>>();
    for (auto& m : msgs) {
        v->push_back(std::make_shared<const json::value>(std::move(m)));
    }
    return {v};
}

const json::value PROMPT = json::object{{"role", "user"}, {"content", "hi"}};
const json::value ASSISTANT_TOOL =
    json::parse(R"({"id":"msg_1","role":"assistant","model":"m1","stop_reason":"tool_use",
  "content":[{"type":"thinking","thinking":"hmm","signature":"sg"},{"type":"text",
  "text":"checking"},
             {"type":"tool_use","id":"t1","name":"bash","input":{"command":"ls"}}]})");
const json::value TOOL_RESULTS = json::parse(
    R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a b",)"
    R"("is_error":false}]})");
const json::value ASSISTANT_ANSWER =
    json::parse(R"({"role":"assistant","content":[{"type":"text","text":"two files"}],)"
                R"("stop_reason":"end_turn"})");

TEST(FrameBuilder, BuildsAssistantToolResultAndResultRows) {
    FrameBuilder fb("sess-1", 1, "default-model");
    std::vector<json::object> rows;
    auto feed = [&](StreamEvent ev) {
        for (auto& r : fb.on_event(ev)) {
            rows.push_back(std::move(r));
        }
    };
    feed(llm::Text{"checking"}); // previews give no rows
    feed(history({PROMPT, ASSISTANT_TOOL}));
    feed(llm::ToolResult{"t1", "a b", false});
    feed(history({PROMPT, ASSISTANT_TOOL, TOOL_RESULTS})); // already emitted: no second row
    feed(history({PROMPT, ASSISTANT_TOOL, TOOL_RESULTS, ASSISTANT_ANSWER}));
    feed(session::Usage{10, 20, 1, 2, "m1"});
    feed(session::Done{});
    ASSERT_EQ(rows.size(), 4U);

    const auto& a = rows[0];
    EXPECT_EQ(a.at("type"), "assistant");
    EXPECT_EQ(a.at("session_id"), "sess-1");
    EXPECT_TRUE(a.at("parent_tool_use_id").is_null());
    EXPECT_EQ(a.at("uuid").as_string().size(), 36U);
    const auto& m = a.at("message").as_object();
    EXPECT_EQ(m.at("id"), "msg_1");
    EXPECT_EQ(m.at("type"), "message");
    EXPECT_EQ(m.at("role"), "assistant");
    EXPECT_EQ(m.at("model"), "m1");
    EXPECT_EQ(m.at("stop_reason"), "tool_use");
    ASSERT_EQ(m.at("content").as_array().size(), 3U);
    EXPECT_EQ(m.at("content").as_array()[0].at("signature"), "sg");

    const auto& u = rows[1];
    EXPECT_EQ(u.at("type"), "user");
    const auto& block = u.at("message").at("content").as_array()[0];
    EXPECT_EQ(block.at("type"), "tool_result");
    EXPECT_EQ(block.at("tool_use_id"), "t1");
    EXPECT_EQ(block.at("content"), "a b");
    EXPECT_EQ(block.at("is_error"), false);

    EXPECT_EQ(rows[2].at("message").at("model"), "default-model");
    EXPECT_TRUE(rows[2].at("message").at("id").as_string().starts_with("msg_"));

    const auto& r = rows[3];
    EXPECT_EQ(r.at("type"), "result");
    EXPECT_EQ(r.at("subtype"), "success");
    EXPECT_EQ(r.at("is_error"), false);
    EXPECT_EQ(r.at("num_turns"), 2);
    EXPECT_EQ(r.at("result"), "two files");
    EXPECT_EQ(r.at("usage").at("input_tokens"), 10);
    EXPECT_EQ(r.at("usage").at("cache_creation_input_tokens"), 2);
    EXPECT_TRUE(r.at("duration_ms").is_int64());
    EXPECT_TRUE(fb.finished());
    EXPECT_TRUE(fb.on_event(session::Done{}).empty());
}

TEST(FrameBuilder, ErrorMakesAnErrorResult) {
    FrameBuilder fb("s", 1);
    fb.on_event(session::Error{"boom", session::Outcome::cancelled});
    auto rows = fb.on_event(session::Done{});
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].at("subtype"), "error_during_execution");
    EXPECT_EQ(rows[0].at("is_error"), true);
    EXPECT_EQ(rows[0].at("result"), "boom");
    EXPECT_EQ(rows[0].at("outcome"), "cancelled");
    ASSERT_TRUE(fb.error().has_value());
}

TEST(FrameBuilder, ToolResultsMissedLiveComeFromHistory) {
    FrameBuilder fb("s", 1);
    auto rows = fb.on_event(history({PROMPT, ASSISTANT_TOOL, TOOL_RESULTS}));
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[1].at("type"), "user");
}

TEST(FrameBuilder, PreviewRowsAreStreamEvents) {
    FrameBuilder fb("s", 1);
    auto t = fb.preview_row(llm::Thinking{"th"});
    auto x = fb.preview_row(llm::Text{"tx"});
    auto x2 = fb.preview_row(llm::Text{"ty"});
    auto st = fb.preview_row(llm::ToolUseStart{"bash", "t1"});
    auto d = fb.preview_row(llm::ToolUseDelta{"t1", "{\"a\""});
    auto r = fb.preview_row(llm::ToolResultDelta{"t1", "out"});
    ASSERT_TRUE(t && x && x2 && st && d && r);
    EXPECT_EQ(t->at("type"), "stream_event");
    EXPECT_EQ(t->at("event").at("delta").at("type"), "thinking_delta");
    EXPECT_EQ(t->at("event").at("delta").at("thinking"), "th");
    EXPECT_EQ(t->at("event").at("index"), 0U);
    EXPECT_EQ(x->at("event").at("type"), "content_block_delta");
    EXPECT_EQ(x->at("event").at("delta").at("text"), "tx");
    EXPECT_EQ(x->at("event").at("index"), 1U);
    EXPECT_EQ(x2->at("event").at("index"), 1U);
    EXPECT_EQ(st->at("event").at("type"), "content_block_start");
    EXPECT_EQ(st->at("event").at("index"), 2U);
    EXPECT_EQ(d->at("event").at("delta").at("type"), "input_json_delta");
    EXPECT_EQ(d->at("event").at("delta").at("partial_json"), "{\"a\"");
    EXPECT_EQ(d->at("event").at("index"), 2U);
    EXPECT_EQ(r->at("event").at("type"), "tool_result_delta");
    EXPECT_EQ(r->at("event").at("tool_use_id"), "t1");
    EXPECT_EQ(r->at("event").at("delta").at("text"), "out");
    EXPECT_FALSE(fb.preview_row(session::Done{}).has_value());
}

TEST(MessagesFromRows, RebuildsHistoryFromClaudeCodeRows) {
    // One row per content block, as Claude Code writes them; a sub-agent row; a result row.
    std::vector<json::object> rows;
    for (const char* r :
         {R"({"type":"system","subtype":"init"})",
          R"({"type":"user","message":{"role":"user","content":"list files"}})",
          R"({"type":"assistant","message":{"id":"m1","role":"assistant",)"
          R"("content":[{"type":"text","text":"sure"}]},"parent_tool_use_id":null})",
          R"({"type":"assistant","message":{"id":"m1","role":"assistant",)"
          R"("content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},)"
          R"("parent_tool_use_id":null})",
          R"({"type":"assistant","message":{"id":"sub","role":"assistant",)"
          R"("content":[{"type":"text","text":"sub-agent"}]},"parent_tool_use_id":"t0"})",
          R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result",)"
          R"("tool_use_id":"t1","content":"x"}]}})",
          R"({"type":"assistant","message":{"id":"m2","role":"assistant",)"
          R"("content":[{"type":"text","text":"done"}]}})",
          R"({"type":"result","subtype":"success","result":"done"})"}) {
        rows.push_back(json::parse(r).as_object());
    }
    auto msgs = messages_from_rows(rows);
    ASSERT_EQ(msgs.size(), 4U);
    EXPECT_EQ(msgs[0].at("role"), "user");
    EXPECT_EQ(msgs[1].at("role"), "assistant");
    EXPECT_EQ(msgs[1].at("content").as_array().size(), 2U);
    EXPECT_EQ(msgs[2].at("content").as_array()[0].at("type"), "tool_result");
    EXPECT_EQ(msgs[3].at("content").as_array()[0].at("text"), "done");
}

} // namespace
} // namespace sluice::runtime
