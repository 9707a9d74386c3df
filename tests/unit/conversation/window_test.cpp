// Tests of the window cut (in frames and in bytes), the live copy, Shed and pages.
#include <sluice/conversation/window.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

using sluice::Budget;
using sluice::Frame;
using sluice::FramePtr;
using sluice::HeldFrame;
using sluice::Window;

constexpr std::size_t W = 100; // every test frame weighs exactly this many wire bytes

FramePtr frame(const std::string& type, const std::string& extra = "") {
    std::string head = R"({"type":")" + type + R"(")" + extra + R"(,"message":{"content":")";
    std::string tail = R"("}})";
    std::string pad(W - head.size() - tail.size(), 'x');
    auto f = Frame::parse(head + pad + tail);
    EXPECT_TRUE(f.has_value());
    EXPECT_EQ((*f)->wire_bytes(), W);
    return *f;
}

FramePtr prompt() {
    return frame("user");
}

FramePtr answer() {
    return frame("assistant");
}

FramePtr thinking(int delta, bool subagent = false) {
    auto f = Frame::parse(
        R"({"type":"system","subtype":"thinking_tokens","estimated_tokens_delta":)"
        + std::to_string(delta) + (subagent ? R"(,"parent_tool_use_id":"t1")" : "") + "}");
    return *f;
}

// The seed's cases hold on either axis: a budget binding by frame count, or by bytes.
enum class Axis { count, bytes };

Budget budget(Axis axis, std::uint64_t cap, std::uint64_t slack) {
    constexpr std::uint64_t HUGE_ = 1ULL << 40;
    if (axis == Axis::count) {
        return {cap, slack, HUGE_, HUGE_};
    }
    return {HUGE_, HUGE_, cap * W, slack * W};
}

// Builds turns of the given lengths (a prompt then answers) into a window.
std::vector<FramePtr> turns(std::initializer_list<std::size_t> lengths) {
    std::vector<FramePtr> out;
    for (auto n : lengths) {
        out.push_back(prompt());
        for (std::size_t i = 1; i < n; ++i) {
            out.push_back(answer());
        }
    }
    return out;
}

class WindowCut : public ::testing::TestWithParam<Axis> {};

TEST_P(WindowCut, DropLandsOnTheFirstTurnAtOrAboveTheLine) {
    Window w(budget(GetParam(), 8, 2));
    sluice::Shed shed;
    for (auto& f : turns({4, 4, 3})) { // openings at 0, 4, 8; the 11th frame is past 8 + 2
        shed = w.append(f);
    }
    // line = 11 - 8 = 3; the first opening at or after it is 4.
    EXPECT_EQ(shed.frames, 4U);
    EXPECT_EQ(w.first(), 4U);
    EXPECT_EQ(w.size(), 7U);
    EXPECT_TRUE(w.opens_turn(4));
    EXPECT_EQ(w.bytes(), 7 * W);
}

TEST_P(WindowCut, ATurnCrossingTheLineRidesIntoTheSlack) {
    Window w(budget(GetParam(), 8, 4));
    for (auto& f : turns({3, 10})) { // 13 frames, past 12; the newest turn opens at 3
        w.append(f);
    }
    // line = 5, no opening at or after it; the tail from 3 (10 frames) fits 8 + 4.
    EXPECT_EQ(w.first(), 3U);
    EXPECT_EQ(w.size(), 10U);
    EXPECT_TRUE(w.opens_turn(3));
}

TEST_P(WindowCut, ATurnHeavierThanBothCeilingsIsCutInsideAndKeepsTheNewest) {
    Window w(budget(GetParam(), 8, 2));
    auto fs = turns({2, 30});
    for (auto& f : fs) {
        w.append(f);
    }
    EXPECT_LE(w.size(), 10U);
    EXPECT_GE(w.size(), 8U);
    EXPECT_EQ(w.end(), fs.size());
    EXPECT_EQ(w.at(w.end() - 1), fs.back());
    EXPECT_TRUE(w.openings().empty()); // the cut landed inside the turn
    for (auto p = w.first(); p < w.end(); ++p) {
        EXPECT_EQ(w.at(p), fs[p]);
    }
}

TEST_P(WindowCut, AHeadTheScanCannotNameLeavesTheCountCut) {
    Window w(budget(GetParam(), 8, 2));
    for (int i = 0; i < 11; ++i) {
        w.append(answer());
    }
    EXPECT_EQ(w.first(), 3U);
    EXPECT_EQ(w.size(), 8U);
}

TEST_P(WindowCut, ACopyPastTheCapStaysInAWindowSizedStore) {
    const Budget b = budget(GetParam(), 50, 10);
    Window w(b);
    std::vector<FramePtr> all;
    std::mt19937 rng(7);
    for (int i = 0; i < 5000; ++i) {
        auto f = (rng() % 7 == 0) ? prompt() : answer();
        all.push_back(f);
        const auto before = w.first();
        auto shed = w.append(f);
        EXPECT_EQ(w.first() - before, shed.frames);
        ASSERT_FALSE(b.past_ceiling(w.size(), w.bytes()));
        ASSERT_EQ(w.end(), all.size());
    }
    EXPECT_GT(w.first(), 0U);
    for (auto p = w.first(); p < w.end(); ++p) {
        ASSERT_EQ(w.at(p), all[p]);
    }
    EXPECT_EQ(w.at(w.first() - 1), nullptr);
    EXPECT_EQ(w.at(w.end()), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Axes, WindowCut, ::testing::Values(Axis::count, Axis::bytes));

TEST(CutPoint, AFrameThatOpensNoTurnIsNeverTheCutWhenAnOpeningIsAboveTheLine) {
    std::mt19937 rng(42);
    for (int round = 0; round < 2000; ++round) {
        sluice::HeldFrames held;
        const std::size_t n = 1 + rng() % 60;
        for (std::size_t i = 0; i < n; ++i) {
            held.push_back({answer(), rng() % 5 == 0});
        }
        const Budget b{1 + rng() % 30, rng() % 10, (1 + rng() % 40) * W, (rng() % 10) * W};
        const std::size_t cut = sluice::cut_point(held, b);
        ASSERT_LT(cut, n);
        std::size_t line = n > b.cap ? n - b.cap : 0;
        while (line < n - 1 && (n - line) * W > b.cap_bytes) {
            ++line;
        }
        bool opening_above = false;
        for (std::size_t j = line; j < n; ++j) {
            opening_above = opening_above || held[j].opens;
        }
        if (opening_above) {
            ASSERT_TRUE(held[cut].opens);
            ASSERT_GE(cut, line);
        } else {
            ASSERT_TRUE(cut == line || held[cut].opens);
            ASSERT_LE(cut, line);
        }
    }
}

TEST(CutPoint, ShedThinkingSumsOnlyTheNewestTurnsOwnDeltas) {
    sluice::HeldFrames held = {
        {prompt(), true},
        {thinking(5), false},
        {answer(), false}, // older turn
        {prompt(), true},
        {thinking(7), false},
        {thinking(100, true), false},
        {thinking(11), false},
        {answer(), false},
        {answer(), false},
        {answer(), false},
    };
    const Budget b{4, 1, 1ULL << 40, 1ULL << 40};
    const std::size_t cut = sluice::cut_point(held, b);
    EXPECT_EQ(cut, 6U); // inside the newest turn: its tail from 3 (7 frames) is past 4 + 1
    EXPECT_EQ(sluice::shed_thinking(held, cut), 7U); // not 5 (older turn), not 100 (sub-agent)
    EXPECT_EQ(sluice::shed_thinking(held, 3), 0U);   // dropping only the older turn
}

TEST(WindowPage, ServesTheNewestTurnsWithACursor) {
    Window w(Budget{1000, 250, 1ULL << 40, 1ULL << 40});
    for (int t = 0; t < 30; ++t) {
        for (auto& f : turns({3})) {
            w.append(f);
        }
    }
    auto p = w.page();
    ASSERT_TRUE(p.has_value());
    ASSERT_EQ(p->turns.size(), sluice::SUBSCRIBE_TURNS);
    EXPECT_EQ(p->turns.front().first, 30U);
    EXPECT_EQ(p->turns.back().first, 87U);
    EXPECT_EQ(p->turns.back().frames.size(), 3U);
    ASSERT_EQ(p->cursor, std::optional<std::uint64_t>(30));
    auto older = w.page(p->cursor);
    ASSERT_TRUE(older.has_value());
    EXPECT_EQ(older->turns.size(), 10U);
    EXPECT_EQ(older->turns.front().first, 0U);
    EXPECT_FALSE(older->cursor.has_value());
}

TEST(WindowPage, IsTheWholeWindowWhereTheByteCapBindsAndSendsOlderToTheTranscript) {
    Window w(Budget{1000, 250, 20 * W, 5 * W});
    for (int t = 0; t < 30; ++t) {
        for (auto& f : turns({3})) {
            w.append(f);
        }
    }
    auto p = w.page();
    ASSERT_TRUE(p.has_value());
    std::size_t frames = 0;
    for (const auto& t : p->turns) {
        frames += t.frames.size();
    }
    EXPECT_EQ(frames, w.size());
    EXPECT_LT(p->turns.size(), sluice::SUBSCRIBE_TURNS);
    ASSERT_EQ(p->cursor, std::optional<std::uint64_t>(w.first()));
    EXPECT_FALSE(w.page(p->cursor).has_value()); // below the floor: the transcript answers
}

TEST(WindowPage, CursorsSurviveDrops) {
    Window w(Budget{40, 10, 1ULL << 40, 1ULL << 40});
    std::vector<FramePtr> all;
    for (int t = 0; t < 12; ++t) {
        for (auto& f : turns({4})) {
            all.push_back(f);
            w.append(f);
        }
    }
    auto p = w.page(std::nullopt, 3);
    ASSERT_TRUE(p && p->cursor);
    const auto cursor = *p->cursor;
    auto before = w.page(cursor, 2);
    for (int i = 0; i < 4; ++i) { // drops happen; the cursor still means the same frames
        w.append(answer());
    }
    ASSERT_GT(w.first(), 0U);
    auto after = w.page(cursor, 2);
    ASSERT_TRUE(before && after);
    ASSERT_EQ(before->turns.size(), after->turns.size());
    for (std::size_t i = 0; i < before->turns.size(); ++i) {
        EXPECT_EQ(before->turns[i].first, after->turns[i].first);
        EXPECT_EQ(before->turns[i].frames, after->turns[i].frames);
    }
}

} // namespace
