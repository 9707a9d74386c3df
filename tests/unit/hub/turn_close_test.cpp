// Unit tests of hub/turn_close.hpp: what a turn lacks to be whole, and the rows that close it.
#include "support/heap.hpp"

#include <sluice/hub/turn_close.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::hub {
namespace {

namespace json = boost::json;

FramePtr frame(std::string_view text) {
    auto f = Frame::parse(text);
    EXPECT_TRUE(f.has_value()) << text;
    return *f;
}

const char* const PROMPT = R"({"type":"user","message":{"role":"user","content":"go"}})";
const char* const TOOL_USE = R"({"type":"assistant","message":{"role":"assistant","content":[)"
                             R"({"type":"tool_use","id":"toolu_1","name":"bash","input":{}},)"
                             R"({"type":"tool_use","id":"toolu_2","name":"bash","input":{}}]}})";
const char* const ANSWER_1 = R"({"type":"user","message":{"role":"user","content":[)"
                             R"({"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}})";
const char* const SUB_TOOL_USE =
    R"({"type":"assistant","parent_tool_use_id":"toolu_2","message":{"role":"assistant",)"
    R"("content":[{"type":"tool_use","id":"toolu_sub","name":"bash","input":{}}]}})";
const char* const RESULT = R"({"type":"result","subtype":"success","result":"done"})";

using test::heap_in_use;

// Every frame of a seat's window is observed: a compact frame (as windows hold them) must stay
// compact, or each frame keeps its object beside its JSON for its life — a window then costs
// about twice its wire bytes (bench/window_rss.py: 3.84x -> 1.98x at 20 seats when fixed).
TEST(TurnClose, ObservingAWindowsFramesKeepsThemCompact) {
    const std::string text(4000, 'x');
    std::vector<FramePtr> frames;
    std::size_t wire = 0;
    const auto before = heap_in_use();
    for (int i = 0; i < 500; ++i) {
        frames.push_back(Frame::from_row_compact(json::object{
            {"type", "assistant"},
            {"timestamp", "2026-12-06T22:00:00.000Z"},
            {"message",
             {{"role", "assistant"},
              {"content", json::array{json::object{{"type", "text"}, {"text", text}}}}}}}));
        wire += frames.back()->wire_bytes();
    }
    const auto held = heap_in_use() - before;
    TurnClose tc;
    for (const auto& f : frames) {
        tc.observe(*f);
    }
    const auto after = heap_in_use() - before;
    // (Under TSan the allocator counts its size classes: ~1.3x; glibc ~1.2x, ASan less.)
    EXPECT_LT(held, wire * 3 / 2) << "a compact frame costs about its wire bytes";
    EXPECT_LT(after, held + wire / 10)
        << "observing grew the frames by " << after - held << " bytes (" << wire << " wire bytes)";
    EXPECT_TRUE(tc.open());
}

TEST(TurnClose, AnUnstartedTurnIsNotOpen) {
    TurnClose t;
    EXPECT_FALSE(t.open());
    EXPECT_TRUE(t.closing_rows("x", "y", "s-1").empty());
}

TEST(TurnClose, TracksUnansweredToolUsesOfTheMainThreadOnly) {
    TurnClose t;
    t.start();
    for (const char* row : {PROMPT, TOOL_USE, ANSWER_1, SUB_TOOL_USE}) {
        t.observe(*frame(row));
    }
    EXPECT_TRUE(t.open());
    EXPECT_EQ(t.unanswered(), std::vector<std::string>{"toolu_2"});
    t.observe(*frame(RESULT));
    EXPECT_FALSE(t.open());
    EXPECT_TRUE(t.closing_rows("x", "y", "s-1").empty());
}

TEST(TurnClose, ClosingRowsAnswerEveryToolThenCloseInStreamJsonShapes) {
    TurnClose t;
    t.start();
    t.observe(*frame(PROMPT));
    t.observe(*frame(TOOL_USE));
    const auto rows = t.closing_rows(INTERRUPTED_TOOL_TEXT, INTERRUPTED_TEXT, "s-1");
    ASSERT_EQ(rows.size(), 3U);
    for (std::size_t i = 0; i < 2; ++i) {
        const auto f = Frame::from_row(rows[i]);
        EXPECT_EQ(f->type(), "user");
        EXPECT_EQ(f->facts().role, FrameRole::tool_result); // the turn scan opens no turn here
        const auto& block = rows[i].at("message").at("content").as_array().at(0);
        EXPECT_EQ(block.at("tool_use_id").as_string(), i == 0 ? "toolu_1" : "toolu_2");
        EXPECT_EQ(block.at("is_error"), true);
        EXPECT_EQ(block.at("content").as_string(), INTERRUPTED_TOOL_TEXT);
    }
    EXPECT_EQ(rows[2].at("type").as_string(), "result");
    EXPECT_EQ(rows[2].at("subtype").as_string(), "error_during_execution");
    EXPECT_EQ(rows[2].at("is_error"), true);
    EXPECT_EQ(rows[2].at("result").as_string(), "interrupted");
    TurnClose after;
    after.start();
    for (const auto& r : rows) {
        after.observe(*Frame::from_row(r));
    }
    EXPECT_FALSE(after.open());
}

TEST(TurnClose, APromptAloneIsClosedByAResultRow) {
    TurnClose t;
    t.start();
    t.observe(*frame(PROMPT));
    const auto rows = t.closing_rows(RESTART_TEXT, RESTART_TEXT, "s-1");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].at("result").as_string(), "interrupted by a hub restart");
}

TEST(TurnClose, AReadBackTurnLastedFromItsPromptToItsNewestFrame) {
    // The hub died mid-turn: the closing result says how long the turn ran, not 0.
    TurnClose t;
    t.observe(*frame(R"({"type":"user","timestamp":"2026-12-05T08:00:00.000Z",)"
                     R"("message":{"role":"user","content":"go"}})"));
    t.observe(*frame(R"({"type":"assistant","timestamp":"2026-12-05T08:00:12.345Z",)"
                     R"("message":{"role":"assistant","content":[{"type":"text","text":"hm"}]}})"));
    const auto rows = t.closing_rows(INTERRUPTED_TOOL_TEXT, INTERRUPTED_TEXT, "s-1");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].at("duration_ms").to_number<std::int64_t>(), 12'345);
    EXPECT_FALSE(rows[0].contains("num_turns")); // not counted: no made-up "0 steps"
}

TEST(TurnClose, AStartedTurnLastedUntilItIsClosed) {
    TurnClose t;
    t.start();
    t.observe(*frame(R"({"type":"user","timestamp":"2000-01-01T00:00:00.000Z",)"
                     R"("message":{"role":"user","content":"go"}})"));
    const auto rows = t.closing_rows(RESTART_TEXT, RESTART_TEXT, "s-1");
    ASSERT_EQ(rows.size(), 1U);
    const auto ms = rows[0].at("duration_ms").to_number<std::int64_t>();
    EXPECT_GE(ms, 0);
    EXPECT_LT(ms, 60'000); // from start(), not from a frame's stale clock
}

TEST(TurnClose, NoDurationWhenNothingSaysWhenTheTurnOpened) {
    TurnClose t;
    t.observe(*frame(PROMPT));
    const auto rows = t.closing_rows(INTERRUPTED_TOOL_TEXT, INTERRUPTED_TEXT, "s-1");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_FALSE(rows[0].contains("duration_ms"));
}

} // namespace
} // namespace sluice::hub
