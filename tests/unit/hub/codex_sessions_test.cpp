// Unit tests of hub/codex_sessions.hpp's listing of a rollout (on the real rollouts in
// tests/fixtures/codex): file names, the title and project, turns counted and kept counted.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/codex_sessions.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

using namespace sluice::hub;
using sluice::RowFormat;
using sluice::test::slurp;
using sluice::test::TempDir;

std::string rollout(const std::string& name) {
    return slurp(std::string(SLUICE_SOURCE_DIR) + "/tests/fixtures/codex/" + name);
}

constexpr std::string_view NAME =
    "rollout-2026-12-07T01-33-27-01a24e22-680f-77b2-b9cf-476f93998689.jsonl";

TEST(CodexSessionsListing, FileNamesNameTheirThread) {
    EXPECT_TRUE(is_rollout_file_name(NAME));
    EXPECT_EQ(rollout_session_id(NAME), "01a24e22-680f-77b2-b9cf-476f93998689");
    EXPECT_EQ(
        codex_seat_id("01a24e22-680f-77b2-b9cf-476f93998689"),
        "codex-01a24e22-680f-77b2-b9cf-476f93998689");
    for (const std::string_view bad :
         {"rollout-oops.jsonl",
          "01a24e22-680f-77b2-b9cf-476f93998689.jsonl",
          "rollout-2026-12-07T01-33-27-01a24e22-680f-77b2-b9cf-476f9399868.jsonl",
          "rollout-2026-12-07T01-33-27-01a24e22-680f-77b2-b9cf-476f93998689.json",
          "rollout-2026-12-07T01-33-27x01a24e22-680f-77b2-b9cf-476f93998689.jsonl"}) {
        EXPECT_FALSE(is_rollout_file_name(bad)) << bad;
        EXPECT_EQ(rollout_session_id(bad), "") << bad;
    }
}

TEST(CodexSessionsListing, TitleIsTheFirstPromptAndProjectTheSessionCwd) {
    const auto text = rollout("resumed.jsonl");
    const auto l = parse_rollout_listing(text, true);
    EXPECT_EQ(l.format, RowFormat::codex_rollout);
    EXPECT_EQ(l.title, "think about the word pelican") << "not the environment context";
    EXPECT_EQ(l.project, "/work/scratch/cxf/work");
    ASSERT_TRUE(l.turns.has_value());
    EXPECT_EQ(*l.turns, 2U);
    EXPECT_EQ(l.counted, text.size());
    EXPECT_EQ(foreign_source(l), "codex");
}

TEST(CodexSessionsListing, AHeadCutShortNamesTheSessionButCountsNoTurns) {
    const auto text = rollout("exec-approvals.jsonl");
    // Through the first prompt's item and into the next line.
    const auto at = text.find("\"UserMessage\"");
    ASSERT_NE(at, std::string::npos);
    const auto cut = text.find('\n', at) + 20;
    const auto l = parse_rollout_listing(std::string_view(text).substr(0, cut), false);
    EXPECT_EQ(l.title, "run:echo hi-from-codex > out.txt; cat out.txt");
    EXPECT_EQ(l.project, "/work/scratch/cxf/work");
    EXPECT_FALSE(l.turns.has_value());
    // Cut before the prompt's line ends: no title yet (listed again as the file grows).
    const auto early = parse_rollout_listing(std::string_view(text).substr(0, at), false);
    EXPECT_EQ(early.title, "");
    EXPECT_EQ(early.project, "/work/scratch/cxf/work");
}

TEST(CodexSessionsListing, AGrowingRolloutKeepsItsTurnsCounted) {
    TempDir dir;
    const auto path = std::filesystem::path(dir.path()) / std::string(NAME);
    const auto text = rollout("exec-approvals.jsonl");
    // The first turn: through its task_complete (line 19).
    std::size_t end = 0;
    for (int i = 0; i < 19; ++i) {
        end = text.find('\n', end) + 1;
    }
    sluice::test::spill(path, text.substr(0, end));
    auto l = list_session_file(path, RowFormat::codex_rollout);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->session_id, "01a24e22-680f-77b2-b9cf-476f93998689");
    ASSERT_TRUE(l->turns.has_value());
    EXPECT_EQ(*l->turns, 1U);
    sluice::test::append_to(path, text.substr(end));
    EXPECT_TRUE(relist_if_changed(path, *l));
    ASSERT_TRUE(l->turns.has_value());
    EXPECT_EQ(*l->turns, 2U) << "what was appended is counted as a rollout";
    EXPECT_EQ(l->format, RowFormat::codex_rollout);
}

} // namespace
