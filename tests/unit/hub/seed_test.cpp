// Unit tests of hub/seed.hpp: what a continue copies of a session file, whole or its newest part.
#include "hub/seed.hpp"
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/turns.hpp>

#include <gtest/gtest.h>

namespace {

using sluice::FramePtr;
using sluice::TurnScan;
using sluice::hub::seed_transcript;
using sluice::test::read_lines;
using sluice::test::slurp;
using sluice::test::TempDir;

// A real Claude Code session (79 prompts, 0.5 MB).
const char* const SESSION = "iansherr_claude-code-log/"
                            "test_test_data_real_projects_-Users-dain-workspace-JSSoundRecorder_"
                            "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl";

// The session's rows `times` over: a long session.
std::string long_session(int times) {
    const auto one = slurp(sluice::test::fixture_path(SESSION));
    std::string all;
    for (int i = 0; i < times; ++i) {
        all += one;
    }
    return all;
}

std::string seeded(const TempDir& dir, const std::string& rows, std::uint64_t max_bytes) {
    sluice::test::write_file(dir.file("session.jsonl"), rows);
    const auto r = seed_transcript(
        dir.file("session.jsonl"), dir.file("seeded.jsonl"), sluice::RowFormat::frames, max_bytes);
    EXPECT_TRUE(r) << r.error().message;
    return slurp(dir.file("seeded.jsonl"));
}

bool opens_a_turn_first(const std::string& path) {
    for (const auto& line : read_lines(path)) {
        auto f = sluice::Frame::parse(line);
        if (f && (*f)->is_frame()) {
            TurnScan scan;
            return scan.opens_turn(**f);
        }
    }
    return false;
}

TEST(Seed, ASessionWithinTheBoundIsCopiedWholeButItsUnfinishedLastRow) {
    TempDir dir;
    const auto rows = long_session(1);
    const auto all = seeded(dir, rows, rows.size());
    EXPECT_GT(all.size(), rows.size() / 2); // frames: most of the file
    EXPECT_LE(all.size(), rows.size());
    const auto unfinished = seeded(dir, rows + R"({"type":"user","message":{"role":"us)", 1U << 30);
    EXPECT_EQ(unfinished, all);
}

TEST(Seed, ALongSessionGivesItsNewestTurnsWithinTheBoundStartingWhereATurnOpens) {
    TempDir dir;
    const auto rows = long_session(20); // 10 MB
    const auto whole = seeded(dir, rows, rows.size());
    constexpr std::uint64_t BOUND = 300 * 1024;
    const auto newest = seeded(dir, rows, BOUND);
    ASSERT_FALSE(newest.empty());
    EXPECT_LE(newest.size(), BOUND);
    EXPECT_GT(newest.size(), BOUND / 4); // a prompt opens a turn every few KB here
    // The newest rows, as the whole copy has them, from a row that opens a turn.
    EXPECT_EQ(whole.substr(whole.size() - newest.size()), newest);
    EXPECT_EQ(whole[whole.size() - newest.size() - 1], '\n');
    EXPECT_TRUE(opens_a_turn_first(dir.file("seeded.jsonl")));
}

TEST(Seed, OneTurnLongerThanTheBoundGivesItsNewestPart) {
    TempDir dir;
    // One prompt, then 2,000 assistant rows: no turn opens in the newest 64 KB.
    std::string rows =
        R"({"type":"user","message":{"role":"user","content":"go"},"uuid":"u0","sessionId":"s"})"
        "\n";
    for (int i = 0; i < 2000; ++i) {
        rows += R"({"type":"assistant","message":{"role":"assistant",)"
                R"("content":[{"type":"text","text":"step )"
                + std::to_string(i) + R"("}]},"uuid":"a)" + std::to_string(i)
                + R"(","sessionId":"s"})" + "\n";
    }
    const auto newest = seeded(dir, rows, 64 * 1024);
    ASSERT_FALSE(newest.empty());
    EXPECT_LE(newest.size(), 64U * 1024);
    EXPECT_NE(newest.find("step 1999"), std::string::npos);
    EXPECT_EQ(newest.find("\"go\""), std::string::npos);
    EXPECT_EQ(rows.substr(rows.size() - newest.size()), newest);
}

TEST(Seed, AnUnreadableSessionIsRefusedAndNamed) {
    TempDir dir;
    const auto r = seed_transcript(dir.file("absent.jsonl"), dir.file("seeded.jsonl"));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("absent.jsonl"), std::string::npos);
}

} // namespace
