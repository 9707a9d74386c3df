// Tests of Frame: parsing, compact JSON, the counting writer, classification, thinking deltas.
#include "support/heap.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/frame_ref.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using sluice::Frame;
using sluice::FrameRole;

sluice::FramePtr must_parse(std::string_view line) {
    auto f = Frame::parse(line);
    EXPECT_TRUE(f.has_value()) << line;
    return f ? *f : nullptr;
}

TEST(Frame, ParseRejectsNonJsonAndNonObjects) {
    EXPECT_FALSE(Frame::parse("{\"type\":").has_value());
    EXPECT_FALSE(Frame::parse("not json").has_value());
    EXPECT_FALSE(Frame::parse("42").has_value());
    EXPECT_FALSE(Frame::parse("[1]").has_value());
    EXPECT_FALSE(Frame::parse("\"massive error\"").has_value());
    EXPECT_FALSE(Frame::parse("{\"a\":\"\xff\"}").has_value()); // invalid UTF-8
}

TEST(Frame, JsonIsCompactAndTypeIsRead) {
    auto f = must_parse(R"(  { "type" : "user", "message" : {"content": "hi"} }  )");
    EXPECT_EQ(f->json(), R"({"type":"user","message":{"content":"hi"}})");
    EXPECT_EQ(f->type(), "user");
    EXPECT_TRUE(f->is_frame());
    EXPECT_EQ(f->wire_bytes(), f->json().size());
    EXPECT_EQ(f->row().at("message").at("content").as_string(), "hi");
}

// A compact frame (a seat's live rows) is the same frame as a kept one: same JSON, weight,
// facts and row; only its object is parsed back when asked for.
TEST(Frame, ACompactFrameEqualsAKeptOne) {
    const auto row =
        boost::json::parse(R"({"type":"assistant","message":{"role":"assistant","content":[)"
                           R"({"type":"tool_use","id":"tu_1","name":"Bash","input":{"c":"ls"}}]}})")
            .as_object();
    const auto kept = Frame::from_row(row);
    const auto compact = Frame::from_row_compact(row);
    EXPECT_EQ(compact->json(), kept->json());
    EXPECT_EQ(compact->wire_bytes(), kept->wire_bytes());
    EXPECT_EQ(compact->type(), "assistant");
    EXPECT_EQ(compact->facts().tool_call, kept->facts().tool_call);
    EXPECT_TRUE(compact->facts().tool_call);
    EXPECT_EQ(compact->row(), kept->row());
}

TEST(Frame, AnOversizeFrameKeepsItsObjectForItsReferenceForm) {
    // A compact frame lets its object go; one over FRAME_INLINE_MAX_BYTES keeps it, built or
    // parsed, so cutting its reference form does not parse the megabytes a second time.
    auto row = boost::json::parse(R"({"type":"user","message":{"role":"user","content":[)"
                                  R"({"type":"tool_result","tool_use_id":"t","content":""}]}})")
                   .as_object();
    EXPECT_FALSE(Frame::from_row_compact(row)->keeps_row());
    row["message"].as_object()["content"].as_array()[0].as_object()["content"] =
        std::string(sluice::FRAME_INLINE_MAX_BYTES + 1, 'x');
    const auto big = Frame::from_row_compact(row);
    EXPECT_TRUE(big->keeps_row());
    EXPECT_EQ(big->row(), row);
    const auto parsed = Frame::parse(big->json());
    ASSERT_TRUE(parsed);
    EXPECT_TRUE((*parsed)->keeps_row());
    const auto held = sluice::held_form(big);
    EXPECT_LE(held->wire_bytes(), sluice::FRAME_INLINE_MAX_BYTES);
    EXPECT_TRUE(sluice::is_reference_form(*held));
}

TEST(Frame, FrameTypesAreTheFourConversationTypes) {
    for (auto t : {"user", "assistant", "system", "result"}) {
        EXPECT_TRUE(sluice::is_frame_type(t)) << t;
    }
    for (auto t :
         {"summary",
          "queue-operation",
          "attachment",
          "file-history-snapshot",
          "progress",
          "last-prompt",
          "stream_event",
          "",
          "User"}) {
        EXPECT_FALSE(sluice::is_frame_type(t)) << t;
    }
    EXPECT_FALSE(must_parse(R"({"silly":"this"})")->is_frame());
}

TEST(Frame, CountingWriterMatchesTheSerializerOnAwkwardValues) {
    const char* cases[] = {
        R"({"a":-9223372036854775808,"b":18446744073709551615,"c":0,"d":-1,"e":1234567890})",
        R"({"f":1.5,"g":-0.000123,"h":1e300,"i":2.2250738585072014e-308,"j":0.1,"k":-0.0})",
        R"({"s":"quote\" back\\ nl\n tab\t cr\r ff\f bs\b nul\u0000 us\u001f del\u007f"})",
        R"({"u":"café ✓ 😀 \u00e9 \/slash","e":{},"a":[],"n":null,"t":true,"f":false})",
        R"({"deep":[[[{"x":[1,[2,{"y":"z"}]]}]]],"k":[null,true,false,"",0]})",
    };
    for (const char* c : cases) {
        auto v = boost::json::parse(c);
        EXPECT_EQ(sluice::json_wire_bytes(v), boost::json::serialize(v).size()) << c;
        auto f = must_parse(c);
        EXPECT_EQ(f->wire_bytes(), f->json().size()) << c;
    }
}

// Found by the transcript_line fuzzer: Boost.JSON reads `1e999` as an infinity and writes it
// back as `Infinity`, which is not JSON, so the frame's own JSON failed to parse again.
TEST(Frame, NumbersBeyondDoubleRangeStillGiveJsonThatParsesBack) {
    auto f = must_parse(R"({"type":"assistant","usage":{"in":1e999,"out":[-1e999,2]},"ok":1.5})");
    ASSERT_TRUE(f);
    boost::system::error_code ec;
    const auto back = boost::json::parse(f->json(), ec);
    ASSERT_FALSE(ec) << f->json();
    EXPECT_EQ(f->wire_bytes(), f->json().size());
    EXPECT_EQ(back.at("usage").at("in").as_double(), std::numeric_limits<double>::max());
    EXPECT_EQ(back.at("usage").at("out").at(0).as_double(), std::numeric_limits<double>::lowest());
    EXPECT_EQ(back.at("ok").as_double(), 1.5);
    EXPECT_EQ(f->row().at("usage").at("in").as_double(), std::numeric_limits<double>::max());

    boost::json::object built{{"type", "result"}, {"cost", std::nan("")}, {"t", HUGE_VAL}};
    auto g = Frame::from_row(built);
    (void)boost::json::parse(g->json(), ec);
    ASSERT_FALSE(ec) << g->json();
    EXPECT_TRUE(g->row().at("cost").is_null());
    EXPECT_EQ(g->wire_bytes(), g->json().size());
}

TEST(Frame, WireBytesEqualsCompactJsonForEveryFixtureRow) {
    std::size_t rows = 0;
    for (const auto& t : sluice::test::fixture_transcripts()) {
        for (const auto& r : sluice::test::parse_fixture(t)) {
            if (!r.frame) {
                continue;
            }
            ++rows;
            ASSERT_EQ(r.frame->wire_bytes(), r.frame->json().size()) << t.file << ":" << r.line;
            // The materialized row serializes back to the same bytes.
            ASSERT_EQ(boost::json::serialize(r.frame->row()), r.frame->json());
        }
    }
    EXPECT_GT(rows, 2000U);
}

TEST(Frame, FromRowKeepsTheObject) {
    boost::json::object row{{"type", "assistant"}, {"message", {{"content", "x"}}}};
    auto f = Frame::from_row(row);
    EXPECT_EQ(f->row(), row);
    EXPECT_EQ(f->json(), boost::json::serialize(row));
    EXPECT_EQ(f->wire_bytes(), f->json().size());
}

TEST(Frame, ClassifiesUserRows) {
    struct Case {
        const char* line;
        FrameRole role;
    };

    const Case cases[] = {
        {R"({"type":"user","message":{"content":"fix the bug"}})", FrameRole::prompt},
        {R"({"type":"user","message":{"content":[{"type":"text","text":"go"}]}})",
         FrameRole::prompt},
        {R"({"type":"user","message":{"content":"<command-name>/init</command-name>"}})",
         FrameRole::command},
        {R"({"type":"user","message":{"content":"<bash-input>ls</bash-input>"}})",
         FrameRole::command},
        {R"({"type":"user",)"
         R"("message":{"content":"<local-command-stdout>ok</local-command-stdout>"}})",
         FrameRole::note},
        {R"({"type":"user","message":{"content":"<task-notification>done</task-notification>"}})",
         FrameRole::note},
        {R"({"type":"user","message":{"content":[{"type":"text",)"
         R"("text":"[Request interrupted by user]"}]}})",
         FrameRole::note},
        {R"({"type":"user","message":{"content":"[Image: source: /tmp/a.png]"}})", FrameRole::note},
        {R"({"type":"user","isMeta":true,"message":{"content":"skill body"}})", FrameRole::note},
        {R"({"type":"user","isCompactSummary":true,"message":{"content":"summary"}})",
         FrameRole::continuation},
        {R"({"type":"user","message":{"content":"This session is being continued from a )"
         R"(previous conversation that ran out"}})",
         FrameRole::continuation},
        {R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1",)"
         R"("content":"ok"}]}})",
         FrameRole::tool_result},
        {R"({"type":"user","message":{"content":[{"type":"image","source":{}}]}})",
         FrameRole::image},
        {R"({"type":"user","message":{"content":[{"type":"image","source":{}},)"
         R"({"type":"text","text":"see"}]}})",
         FrameRole::prompt},
        {R"({"type":"user","message":"error"})", FrameRole::note},
        {R"({"type":"user","message":{"content":["wow error"]}})", FrameRole::note},
        {R"({"type":"user","message":{"contenst":[]}})", FrameRole::note},
        {R"({"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}})",
         FrameRole::other},
        {R"({"type":"system","subtype":"compact_boundary"})", FrameRole::compact_boundary},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(must_parse(c.line)->facts().role, c.role) << c.line;
    }
}

TEST(Frame, MarksSubagentRowsAndSkillCalls) {
    EXPECT_TRUE(must_parse(R"({"type":"user","isSidechain":true,"message":{"content":"x"}})")
                    ->facts()
                    .subagent);
    EXPECT_TRUE(must_parse(R"({"type":"assistant","parent_tool_use_id":"toolu_1","message":{}})")
                    ->facts()
                    .subagent);
    EXPECT_FALSE(must_parse(R"({"type":"assistant","parent_tool_use_id":null,"message":{}})")
                     ->facts()
                     .subagent);
    auto a = must_parse(R"({"type":"assistant","message":{"content":[{"type":"tool_use","id":"s1",)"
                        R"("name":"Skill","input":{}}]}})");
    EXPECT_TRUE(a->facts().tool_call);
    ASSERT_EQ(a->facts().skill_calls.size(), 1U);
    EXPECT_EQ(a->facts().skill_calls[0], "s1");
}

TEST(Frame, ThinkingDeltaCountsOnlyMainThreadCounterRows) {
    EXPECT_EQ(
        must_parse(R"({"type":"system","subtype":"thinking_tokens","estimated_tokens":50,)"
                   R"("estimated_tokens_delta":50})")
            ->thinking_delta(),
        50U);
    EXPECT_EQ(
        must_parse(R"({"type":"system","subtype":"thinking_tokens","estimated_tokens_delta":7,)"
                   R"("parent_tool_use_id":"t"})")
            ->thinking_delta(),
        0U);
    EXPECT_EQ(
        must_parse(R"({"type":"system","subtype":"thinking_tokens","estimated_tokens":9})")
            ->thinking_delta(),
        0U);
    EXPECT_EQ(
        must_parse(R"({"type":"system","subtype":"thinking_tokens","estimated_tokens_delta":-3})")
            ->thinking_delta(),
        0U);
}

using sluice::test::heap_in_use;

// A window is thousands of frames: what one costs beyond its JSON is the window's overhead on its
// byte cap (issue 31's goal: a window resident at <= 1.25x its wire bytes). A frame cost its JSON
// and a 168-byte object (two empty vectors and an inline JSON object) beside its control block;
// now a 112-byte one. Measured against the same JSON held as bare strings, so the allocator's
// own rounding (TSan's size classes put a 1,043-byte string in a 1,280-byte block) cancels out.
TEST(Frame, ACompactFrameCostsItsJsonAndLittleMore) {
    // Texts of many lengths, so each allocator's size classes round the frames' blocks and the
    // bare strings' alike on average (TSan's classes step by 256 bytes here).
    constexpr std::size_t N = 2000;
    std::vector<sluice::FramePtr> frames;
    frames.reserve(N);
    const auto before = heap_in_use();
    for (std::size_t i = 0; i < N; ++i) {
        const std::string text(700 + ((i * 37) % 1024), 'x');
        frames.push_back(must_parse(
            R"({"type":"assistant","uuid":"u-)" + std::to_string(i)
            + R"(","timestamp":"2026-12-07T16:00:00.000Z","message":{"role":"assistant",)"
            + R"("content":[{"type":"text","text":")" + text + R"("}]}})"));
    }
    const auto held = heap_in_use() - before;
    std::vector<std::string> jsons;
    jsons.reserve(N);
    const auto strings_before = heap_in_use();
    for (const auto& f : frames) {
        jsons.emplace_back(f->json());
    }
    const auto strings = heap_in_use() - strings_before;
    ASSERT_GT(held, strings);
    const auto over = static_cast<double>(held - strings) / N;
    // A frame is one block: its shared count, the frame and its JSON (~104 bytes beside the
    // JSON). The frame with its JSON in a block of its own was ~144 more (glibc), ~128 (ASan).
    EXPECT_LT(over, 120.0) << held << " bytes for " << N << " frames whose JSON alone is "
                           << strings;
    EXPECT_LE(sizeof(Frame), 80U);
}

TEST(Frame, AnUncommonTypeIsKeptInTheFramesOwnBlock) {
    auto f = must_parse(R"({"type":"queue-operation","operation":"enqueue"})");
    auto g = must_parse(R"({"type":"assistant","message":{"role":"assistant","content":[]}})");
    auto h = must_parse(R"({"operation":"none"})");
    auto e = must_parse(R"({"type":"que\u0075e","x":1})");
    EXPECT_EQ(f->type(), "queue-operation");
    EXPECT_FALSE(f->is_frame());
    EXPECT_EQ(g->type(), "assistant");
    EXPECT_TRUE(g->is_frame());
    EXPECT_EQ(h->type(), "");
    EXPECT_EQ(e->type(), "queue");
    // The uncommon name sits after the JSON in the frame's block, not in the JSON's own bytes.
    EXPECT_EQ(f->type().data(), f->json().data() + f->json().size());
    EXPECT_EQ(f->json(), R"({"type":"queue-operation","operation":"enqueue"})");
    EXPECT_EQ(e->json(), R"({"type":"queue","x":1})");
}

TEST(Frame, TurnFactsIdListsCopyDeepAndCostAPointerWhileEmpty) {
    sluice::IdList a;
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.begin(), a.end());
    a.emplace_back("toolu_1");
    a.push_back("toolu_2");
    sluice::IdList b = a;
    b.emplace_back("toolu_3");
    ASSERT_EQ(a.size(), 2U);
    ASSERT_EQ(b.size(), 3U);
    EXPECT_EQ(a[1], "toolu_2");
    EXPECT_EQ(
        std::vector<std::string>(b.begin(), b.end()),
        (std::vector<std::string>{"toolu_1", "toolu_2", "toolu_3"}));
    a = b;
    EXPECT_EQ(a.size(), 3U);
    b.clear();
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(a.size(), 3U);
    EXPECT_EQ(sizeof(sluice::IdList), sizeof(void*));
}

} // namespace
