// Tests of TurnScan: hand-built cases and conformance over every fixture transcript.
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/turns.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using sluice::Frame;
using sluice::TurnScan;

// Feeds rows in order; returns the indices that open a turn.
std::vector<std::size_t> openings(const std::vector<std::string>& rows) {
    TurnScan scan;
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        auto f = Frame::parse(rows[i]);
        EXPECT_TRUE(f.has_value()) << rows[i];
        if (f && scan.opens_turn(**f)) {
            out.push_back(i);
        }
    }
    return out;
}

const std::string PROMPT = R"({"type":"user","message":{"content":"do it"}})";
const std::string TEXT_ANSWER =
    R"({"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}})";
const std::string TOOL_CALL =
    R"({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read",)"
    R"("input":{}}]}})";
const std::string TOOL_RESULT =
    R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1",)"
    R"("content":"x"}]}})";
const std::string IMAGE =
    R"({"type":"user","message":{"content":[{"type":"image","source":{"type":"base64",)"
    R"("data":"AA"}}]}})";

TEST(TurnScan, OpensAtTypedPromptsOnly) {
    EXPECT_EQ(
        openings({PROMPT, TEXT_ANSWER, PROMPT, TOOL_CALL, TOOL_RESULT, TEXT_ANSWER}),
        (std::vector<std::size_t>{0, 2}));
}

TEST(TurnScan, SubagentPromptsOpenNoTurn) {
    EXPECT_EQ(
        openings(
            {PROMPT,
             R"({"type":"user","isSidechain":true,"message":{"content":"explore"}})",
             R"({"type":"user","parent_tool_use_id":"t9","message":{"content":"explore"}})",
             TEXT_ANSWER}),
        (std::vector<std::size_t>{0}));
}

TEST(TurnScan, ImageAfterToolCallIsANoteButAPastedImageIsAPrompt) {
    EXPECT_EQ(
        openings({PROMPT, TOOL_CALL, TOOL_RESULT, IMAGE, TEXT_ANSWER, IMAGE}),
        (std::vector<std::size_t>{0, 5}));
}

TEST(TurnScan, ContinuationAfterCompactBoundaryOpensNoTurn) {
    EXPECT_EQ(
        openings(
            {PROMPT,
             TEXT_ANSWER,
             R"({"type":"system","subtype":"compact_boundary"})",
             R"({"type":"user","message":{"content":"Summary of what came before"}})",
             PROMPT}),
        (std::vector<std::size_t>{0, 4}));
}

TEST(TurnScan, SkillBodyAfterSkillResultOpensNoTurn) {
    EXPECT_EQ(
        openings(
            {PROMPT,
             R"({"type":"assistant","message":{"content":[{"type":"tool_use","id":"s1",)"
             R"("name":"Skill","input":{}}]}})",
             R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"s1",)"
             R"("content":"Launching skill"}]}})",
             R"({"type":"user","message":{"content":"Base directory for this skill: /x"}})",
             TEXT_ANSWER,
             PROMPT}),
        (std::vector<std::size_t>{0, 5}));
}

TEST(TurnScan, CommandBodyAfterSlashCommandOpensNoTurn) {
    EXPECT_EQ(
        openings(
            {R"({"type":"user","message":{"content":"<command-name>/review</command-name>"}})",
             R"({"type":"user","message":{"content":"Review the diff carefully"}})",
             TEXT_ANSWER,
             PROMPT}),
        (std::vector<std::size_t>{0, 3}));
}

TEST(TurnScan, EnvelopesAndInterruptsOpenNoTurn) {
    EXPECT_EQ(
        openings(
            {PROMPT,
             R"({"type":"user","message":{"content":"<task-notification>x</task-notification>"}})",
             R"({"type":"user","message":{"content":[{"type":"text",)"
             R"("text":"[Request interrupted by user for tool use]"}]}})",
             R"({"type":"result","subtype":"success"})",
             R"({"type":"system","subtype":"init"})"}),
        (std::vector<std::size_t>{0}));
}

std::string fixture_name(const ::testing::TestParamInfo<sluice::test::FixtureTranscript>& p) {
    return "T" + std::to_string(p.index);
}

class TurnScanFixture : public ::testing::TestWithParam<sluice::test::FixtureTranscript> {};

TEST_P(TurnScanFixture, AgreesWithWhatAPersonCallsAPrompt) {
    const auto& t = GetParam();
    TurnScan scan;
    std::vector<std::size_t> got;
    for (const auto& r : sluice::test::parse_fixture(t)) {
        if (r.frame && r.frame->is_frame() && scan.opens_turn(*r.frame)) {
            got.push_back(r.line);
        }
    }
    EXPECT_EQ(got, t.opening_lines);
    if (t.file.find("edge_cases") == std::string::npos) {
        EXPECT_EQ(got.size(), t.readme_turns);
    }
}

TEST_P(TurnScanFixture, AWarmedUpScanAnswersAsAFullScan) {
    std::vector<sluice::FramePtr> frames;
    for (const auto& r : sluice::test::parse_fixture(GetParam())) {
        if (r.frame && r.frame->is_frame()) {
            frames.push_back(r.frame);
        }
    }
    std::vector<bool> full;
    TurnScan scan;
    for (const auto& f : frames) {
        full.push_back(scan.opens_turn(*f));
    }
    for (std::size_t start = 0; start < frames.size(); ++start) {
        TurnScan warm;
        const std::size_t from =
            start > sluice::TURN_SCAN_WARMUP ? start - sluice::TURN_SCAN_WARMUP : 0;
        for (std::size_t i = from; i < frames.size(); ++i) {
            const bool opens = warm.opens_turn(*frames[i]);
            if (i >= start) {
                ASSERT_EQ(opens, full[i]) << "start " << start << " frame " << i;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures,
    TurnScanFixture,
    ::testing::ValuesIn(sluice::test::fixture_transcripts()),
    fixture_name);

} // namespace
