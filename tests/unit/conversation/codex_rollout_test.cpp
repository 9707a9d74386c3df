// Tests of the Codex rollout reading: each line of three real codex 0.169.0 rollouts
// (tests/fixtures/codex) to at most one frame row, and a transcript of a rollout read, numbered
// from its end and paged as a transcript of frame rows is.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using sluice::codex_frame_row;
using sluice::RowFormat;
using sluice::Transcript;
using sluice::TranscriptOptions;
using sluice::test::read_lines;
using sluice::test::TempDir;

std::string codex_fixture(const std::string& name) {
    return std::string(SLUICE_SOURCE_DIR) + "/tests/fixtures/codex/" + name;
}

// What each line of a rollout reads as: (1-based line number, frame row), frames only.
std::vector<std::pair<std::size_t, json::object>> frames_of(const std::string& name) {
    std::vector<std::pair<std::size_t, json::object>> out;
    const auto lines = read_lines(codex_fixture(name));
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (auto row = codex_frame_row(lines[i])) {
            out.emplace_back(i + 1, std::move(*row));
        }
    }
    return out;
}

std::string text_of(const json::object& row, std::size_t block = 0) {
    const auto& b = row.at("message").at("content").as_array().at(block).as_object();
    const auto* t = b.if_contains("text");
    return t != nullptr ? std::string(t->as_string()) : std::string();
}

std::string block_type(const json::object& row, std::size_t block = 0) {
    return std::string(row.at("message").at("content").as_array().at(block).at("type").as_string());
}

std::size_t turns_in(const std::vector<std::pair<std::size_t, json::object>>& frames) {
    sluice::TurnScan scan;
    std::size_t turns = 0;
    for (const auto& [line, row] : frames) {
        turns += scan.opens_turn(*sluice::Frame::from_row(row)) ? 1U : 0U;
    }
    return turns;
}

TEST(CodexRollout, PromptsAnswersAndReasoningBecomeFramesOfTheirOwnLines) {
    const auto frames = frames_of("resumed.jsonl");
    // Lines 9 (UserMessage), 10 (Reasoning), 12 (AgentMessage), 16 (task_complete), then the
    // resumed turn: 20, 21, 25. The response_item copies of each (lines 8, 11, 13, …), the
    // session meta, the environment context and the token counts are no frames.
    std::vector<std::size_t> lines;
    for (const auto& [line, row] : frames) {
        lines.push_back(line);
    }
    EXPECT_EQ(lines, (std::vector<std::size_t>{9, 10, 12, 16, 20, 21, 25}));
    ASSERT_EQ(frames.size(), 7U);
    EXPECT_EQ(frames[0].second.at("type").as_string(), "user");
    EXPECT_EQ(text_of(frames[0].second), "think about the word pelican");
    EXPECT_EQ(frames[0].second.at("timestamp").as_string(), "2026-12-07T01:33:24.293Z");
    EXPECT_EQ(frames[1].second.at("type").as_string(), "assistant");
    EXPECT_EQ(block_type(frames[1].second), "thinking");
    EXPECT_EQ(
        frames[1].second.at("message").at("content").at(0).at("thinking").as_string(),
        "The person asked me to think about: think about the word pelican");
    EXPECT_EQ(block_type(frames[2].second), "text");
    EXPECT_TRUE(text_of(frames[2].second).starts_with("echo: think about the word pelican"));
    const auto& end = frames[3].second;
    EXPECT_EQ(end.at("type").as_string(), "result");
    EXPECT_EQ(end.at("subtype").as_string(), "success");
    EXPECT_FALSE(end.at("is_error").as_bool());
    EXPECT_TRUE(end.at("duration_ms").is_number());
    EXPECT_EQ(text_of(frames[4].second), "second prompt: which word did I ask about?");
    EXPECT_NE(
        text_of(frames[5].second).find("first: think about the word pelican"), std::string::npos);
    EXPECT_EQ(turns_in(frames), 2U) << "a turn opens at each prompt, at nothing else";
}

TEST(CodexRollout, CommandsBecomeBashCallsWithTheirOutputAndDeclinedOnesShowWhy) {
    const auto frames = frames_of("exec-approvals.jsonl");
    ASSERT_EQ(frames.size(), 10U);
    // Turn 1: the prompt, the call (line 10), its output (line 13), the answer, the end.
    const auto& call = frames[1].second;
    EXPECT_EQ(frames[1].first, 10U);
    EXPECT_EQ(call.at("type").as_string(), "assistant");
    const auto& use = call.at("message").at("content").at(0).as_object();
    EXPECT_EQ(use.at("type").as_string(), "tool_use");
    EXPECT_EQ(use.at("name").as_string(), "Bash") << "the page draws Bash as a command";
    EXPECT_EQ(use.at("id").as_string(), "call_fake000030");
    EXPECT_EQ(
        use.at("input").at("command").as_string(), "echo hi-from-codex > out.txt; cat out.txt");
    EXPECT_EQ(use.at("input").at("description").as_string(), "the test asks to run this command");
    const auto& out = frames[2].second;
    EXPECT_EQ(frames[2].first, 13U);
    EXPECT_EQ(out.at("type").as_string(), "user");
    const auto& result = out.at("message").at("content").at(0).as_object();
    EXPECT_EQ(result.at("type").as_string(), "tool_result");
    EXPECT_EQ(result.at("tool_use_id").as_string(), "call_fake000030") << "joins its call";
    EXPECT_EQ(result.at("content").as_string(), "hi-from-codex\n") << "exec's header dropped";
    EXPECT_FALSE(result.at("is_error").as_bool());
    // Turn 2: the declined command has no CommandExecution item, but its call and the refusal.
    const auto& declined = frames[6].second.at("message").at("content").at(0).as_object();
    EXPECT_EQ(declined.at("input").at("command").as_string(), "rm -f README.txt");
    const auto& refusal = frames[7].second.at("message").at("content").at(0).as_object();
    EXPECT_EQ(refusal.at("tool_use_id").as_string(), declined.at("id").as_string());
    EXPECT_TRUE(refusal.at("is_error").as_bool());
    EXPECT_NE(refusal.at("content").as_string().find("rejected by user"), std::string::npos);
    EXPECT_EQ(turns_in(frames), 2U) << "tool results open no turn";
}

TEST(CodexRollout, AnInterruptedTurnEndsStoppedAndTheNextOpensItsOwn) {
    const auto frames = frames_of("interrupted.jsonl");
    ASSERT_EQ(frames.size(), 5U);
    EXPECT_EQ(text_of(frames[0].second), "please be slow");
    // The `<turn_aborted>` user message (line 11) is no frame; the turn_aborted event is its end.
    const auto& stopped = frames[1].second;
    EXPECT_EQ(frames[1].first, 12U);
    EXPECT_EQ(stopped.at("type").as_string(), "result");
    EXPECT_TRUE(stopped.at("is_error").as_bool());
    EXPECT_EQ(stopped.at("outcome").as_string(), "cancelled") << "a person's interrupt";
    EXPECT_EQ(stopped.at("duration_ms").as_int64(), 731);
    EXPECT_EQ(text_of(frames[2].second), "after the interrupt");
    EXPECT_EQ(frames[4].second.at("subtype").as_string(), "success");
    EXPECT_EQ(turns_in(frames), 2U);
}

TEST(CodexRollout, ThePrefilterNeverHidesAFrame) {
    for (const auto* name : {"resumed.jsonl", "exec-approvals.jsonl", "interrupted.jsonl"}) {
        for (const auto& line : read_lines(codex_fixture(name))) {
            if (!sluice::codex_may_be_frame(line)) {
                EXPECT_FALSE(codex_frame_row(json::parse(line).as_object())) << line;
            }
        }
    }
}

TEST(CodexRollout, SessionMetaAndFirstPromptAreReadFromTheirRows) {
    const auto lines = read_lines(codex_fixture("exec-approvals.jsonl"));
    const auto meta = sluice::codex_session_meta(lines.at(0));
    ASSERT_TRUE(meta);
    EXPECT_EQ(meta->id, "01a24e22-680f-77b2-b9cf-476f93998689");
    EXPECT_EQ(meta->cwd, "/work/scratch/cxf/work");
    EXPECT_FALSE(sluice::codex_prompt_text(lines.at(3))) << "the environment context";
    EXPECT_FALSE(sluice::codex_prompt_text(lines.at(7))) << "the prompt's response_item copy";
    EXPECT_EQ(
        sluice::codex_prompt_text(lines.at(8)), "run:echo hi-from-codex > out.txt; cat out.txt");
    EXPECT_FALSE(sluice::codex_frame_row(std::string_view("not json, \"item_completed\"")));
}

TranscriptOptions rollout_options(bool end_relative) {
    TranscriptOptions o;
    o.read_only = true;
    o.follow = true;
    o.write_index = false;
    o.end_relative = end_relative;
    o.format = RowFormat::codex_rollout;
    return o;
}

TEST(
    CodexRollout, ATranscriptOfARolloutHoldsTheTranslatedFramesWhetherCountedOrNumberedFromItsEnd) {
    const auto file = codex_fixture("exec-approvals.jsonl");
    const auto expected = frames_of("exec-approvals.jsonl");
    for (const bool end_relative : {false, true}) {
        auto t = Transcript::open(file, rollout_options(end_relative));
        ASSERT_TRUE(t) << t.error().message();
        auto w = t->load_window();
        ASSERT_TRUE(w) << w.error().message();
        ASSERT_EQ(w->size(), expected.size()) << "end_relative " << end_relative;
        EXPECT_EQ(t->frame_count(), expected.size()) << "the read reached the start: counted";
        ASSERT_EQ(w->first(), 0U) << "numbered as the count numbers them";
        for (std::size_t i = 0; i < expected.size(); ++i) {
            ASSERT_NE(w->at(i), nullptr) << i;
            EXPECT_EQ(w->at(i)->json(), json::serialize(expected[i].second)) << i;
        }
        EXPECT_EQ(w->openings(), (std::vector<std::uint64_t>{0, 5}));
        // The whole frame by position is the translated row, not the rollout line.
        auto whole = t->frame_json(1);
        ASSERT_TRUE(whole) << whole.error().message();
        EXPECT_EQ(*whole, json::serialize(expected[1].second));
    }
}

TEST(CodexRollout, AFullScanAndAPageAgreeWithTheWindow) {
    auto t = Transcript::open(codex_fixture("resumed.jsonl"), rollout_options(false));
    ASSERT_TRUE(t);
    auto openings = t->openings();
    ASSERT_TRUE(openings);
    EXPECT_EQ(*openings, (std::vector<std::uint64_t>{0, 4}));
    auto page = t->page(7, 1);
    ASSERT_TRUE(page);
    ASSERT_EQ(page->turns.size(), 1U);
    EXPECT_EQ(page->turns[0].first, 4U);
    EXPECT_EQ(page->turns[0].frames.size(), 3U);
    EXPECT_EQ(page->cursor, 4U);
}

TEST(CodexRollout, AFollowedRolloutReadsAppendedLinesAsFrames) {
    TempDir dir;
    const auto lines = read_lines(codex_fixture("resumed.jsonl"));
    std::string first_turn;
    for (std::size_t i = 0; i < 16; ++i) {
        first_turn += lines[i] + "\n";
    }
    const auto path = dir.file("rollout.jsonl");
    sluice::test::write_file(path, first_turn);
    auto t = Transcript::open(path, rollout_options(true));
    ASSERT_TRUE(t);
    auto w = t->load_window();
    ASSERT_TRUE(w);
    EXPECT_EQ(w->size(), 4U);
    std::string second_turn;
    for (std::size_t i = 16; i < lines.size(); ++i) {
        second_turn += lines[i] + "\n";
    }
    sluice::test::append_to(path, second_turn);
    auto fresh = t->refresh();
    ASSERT_TRUE(fresh) << fresh.error().message();
    ASSERT_EQ(fresh->size(), 3U) << "the prompt, the answer and the end of turn 2";
    EXPECT_EQ((*fresh)[0]->facts().role, sluice::FrameRole::prompt);
    EXPECT_EQ(t->frame_count(), 7U);
}

} // namespace
