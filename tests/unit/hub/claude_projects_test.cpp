// Unit tests of the listing rules of hub/claude_projects.hpp (pure: bytes in, listing out).
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/hub/claude_projects.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using namespace sluice::hub;

TEST(ClaudeProjectsListing, TitleRowsWinOverTheFirstPromptAndTheNewestWins) {
    const std::string head =
        R"({"type":"summary","summary":"old summary","leafUuid":"a"})"
        "\n"
        R"({"type":"user","cwd":"/w/p","message":{"role":"user","content":"fix the build"}})"
        "\n"
        R"({"type":"assistant","message":{"role":"assistant","content":[]}})"
        "\n";
    auto l = parse_listing(head, {}, true);
    EXPECT_EQ(l.project, "/w/p");
    EXPECT_EQ(l.title, "old summary");
    ASSERT_TRUE(l.turns.has_value());
    EXPECT_EQ(*l.turns, 1U);
    // A cut tail: its first piece is ignored, a newer custom title wins; turns are unknown.
    const std::string tail = R"(cut piece"}})"
                             "\n"
                             R"({"type":"custom-title","customTitle":"  my   session "})"
                             "\n";
    l = parse_listing(head, tail, false);
    EXPECT_EQ(l.title, "my session");
    EXPECT_FALSE(l.turns.has_value());
}

TEST(ClaudeProjectsListing, FirstPromptSkipsEnvelopesAndCutLines) {
    const std::string head =
        R"({"type":"user","message":{"role":"user",)"
        R"("content":"<command-name>/clear</command-name>"}})"
        "\n"
        R"({"type":"assistant","message":{"role":"assistant","content":[]}})"
        "\n"
        R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":"real one"}]}})"
        "\n"
        R"({"type":"user","message":{"role":"user","content":"a line cut by the head bou)";
    const auto l = parse_listing(head, {}, false);
    EXPECT_EQ(l.title, "real one");
    EXPECT_TRUE(l.project.empty());
}

TEST(ClaudeProjectsListing, ASessionThatStartsWithACommandIsTitledByIt) {
    // Claude Code's `/init`: the command row, then its expanded prompt (`isMeta`, no turn).
    const std::string init =
        R"({"type":"user","cwd":"/w/p","message":{"role":"user","content":)"
        R"("<command-message>init is analyzing your codebase…</command-message>\n)"
        R"(<command-name>/init</command-name>"}})"
        "\n"
        R"({"type":"user","isMeta":true,"message":{"role":"user","content":)"
        R"([{"type":"text","text":"Please analyze this codebase and create a CLAUDE.md"}]}})"
        "\n"
        R"({"type":"assistant","message":{"role":"assistant","content":[]}})"
        "\n";
    for (const bool whole : {true, false}) {
        EXPECT_EQ(parse_listing(init, {}, whole).title, "/init") << whole;
    }
    // With its arguments, in a text block; a `!` bash input; a typed prompt still wins.
    const std::string args =
        R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":)"
        R"("<command-message>orchestrator is running…</command-message>\n)"
        R"(<command-name>/orchestrator</command-name>\n)"
        R"(<command-args>create  TODO app</command-args>"}]}})"
        "\n";
    EXPECT_EQ(parse_listing(args, {}, true).title, "/orchestrator create TODO app");
    const std::string bash =
        R"({"type":"user","message":{"content":"<bash-input>git status</bash-input>"}})"
        "\n";
    EXPECT_EQ(parse_listing(bash, {}, true).title, "!git status");
    const std::string typed =
        init + R"({"type":"user","message":{"role":"user","content":"now fix the build"}})" + "\n";
    EXPECT_EQ(parse_listing(typed, {}, true).title, "now fix the build");
}

TEST(ClaudeProjectsListing, TheInitFixtureIsTitledByItsCommand) {
    // A real session that opens with `/init`; larger than a listing reads, so its head is cut
    // before the first prompt typed.
    const auto l = list_session_file(sluice::test::fixture_path(
        "iansherr_claude-code-log/test_test_data_real_projects_-Users-dain-workspace-"
        "JSSoundRecorder_7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"));
    ASSERT_TRUE(l.has_value());
    EXPECT_GT(l->size, FOREIGN_LIST_HEAD_BYTES + FOREIGN_LIST_TAIL_BYTES);
    EXPECT_EQ(l->project, "/Users/dain/workspace/JSSoundRecorder");
    EXPECT_EQ(l->title, "/init");
}

TEST(ClaudeProjectsListing, EveryFixtureSessionHasATitle) {
    std::size_t files = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(sluice::test::fixture_path(""))) {
        const auto name = e.path().filename().string();
        // A session file: not a sub-agent's (`…_subagents_agent-…`, `…_agent-….jsonl`).
        if (!e.is_regular_file() || e.path().extension() != ".jsonl"
            || name.find("agent-") != std::string::npos) {
            continue;
        }
        const auto l = list_session_file(e.path());
        ASSERT_TRUE(l.has_value()) << e.path();
        if (!l->project.empty()) {
            ++files;
            EXPECT_FALSE(l->title.empty()) << e.path();
        }
    }
    EXPECT_GE(files, 10U) << "the fixture sessions";
}

TEST(ClaudeProjectsListing, TrimTitleCollapsesSpaceAndCutsAtACharacter) {
    EXPECT_EQ(trim_title("  a \n\t b  "), "a b");
    const std::string long_text(200, 'x');
    EXPECT_EQ(trim_title(long_text), std::string(FOREIGN_TITLE_MAX_BYTES, 'x') + "…");
    std::string accents = "a";
    for (int i = 0; i < 100; ++i) {
        accents += "é"; // two bytes each: the cut must not split one
    }
    const auto t = trim_title(accents);
    EXPECT_EQ(t, std::string(accents, 0, FOREIGN_TITLE_MAX_BYTES - 1) + "…");
}

TEST(ClaudeProjectsListing, SessionFileNamesOnly) {
    EXPECT_TRUE(is_session_file_name("fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"));
    EXPECT_FALSE(is_session_file_name("agent-c8d9b115.jsonl")) << "the old sub-agent layout";
    EXPECT_FALSE(is_session_file_name("notes.txt"));
    EXPECT_FALSE(is_session_file_name(".jsonl"));
    EXPECT_FALSE(is_session_file_name("a b.jsonl"));
    EXPECT_EQ(foreign_seat_id("abc"), "c-abc");
}

// Turns as the full path counts them: Frame::parse of every line, then the turn scan.
std::uint64_t full_count(const std::vector<std::string>& lines) {
    sluice::TurnScan scan;
    std::uint64_t n = 0;
    for (const auto& line : lines) {
        auto f = sluice::Frame::parse(line);
        if (f && (*f)->is_frame() && scan.opens_turn(**f)) {
            ++n;
        }
    }
    return n;
}

TEST(ClaudeProjectsListing, CheapTurnCountMatchesTheFullScanOnEveryFixtureTranscript) {
    std::size_t files = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(sluice::test::fixture_path(""))) {
        if (!e.is_regular_file() || e.path().extension() != ".jsonl") {
            continue;
        }
        ++files;
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const auto text = ss.str();
        const auto lines = sluice::test::read_lines(e.path().string());
        EXPECT_EQ(count_turns(text), full_count(lines)) << e.path();
        // Row by row, each on a fresh scan: every row is classified as its full parse is.
        for (std::size_t i = 0; i < lines.size(); ++i) {
            ASSERT_EQ(count_turns(lines[i]), full_count({lines[i]})) << e.path() << ":" << i;
        }
    }
    EXPECT_GE(files, 18U) << "the fixture transcripts";
}

TEST(ClaudeProjectsListing, CheapTurnCountReadsOddRowsAsTheFullParseDoes) {
    const std::vector<std::string> rows{
        R"({"type":"user","message":{"content":"typed"}})",
        R"({"type":"user","message":{"content":"dup"},"message":"not an object"})",
        R"({"type":"user","message":"x","message":{"content":"last wins"}})",
        R"({"type":"user","message":{"content":[1,{"type":"text","text":"after a number"}]}})",
        R"({"type":"user","message":{"content":[{"type":"text","text":"a","type":"image"}]}})",
        R"({"type":"user","isMeta":1,"message":{"content":"meta as a number"}})",
        R"({"type":"user","isSidechain":true,"message":{"content":"a sub-agent's"}})",
        R"({"type":"user","parent_tool_use_id":"t1","message":{"content":"a sub-agent's"}})",
        R"({"type":"user","parent_tool_use_id":"","message":{"content":"main"}})",
        R"({"type":["user"],"message":{"content":"type not a string"}})",
        R"({"message":{"content":"type after"},"type":"user"})",
        R"({"type":"user","message":{"content":{"text":"content an object"}}})",
        R"({"type":"user","message":{"content":"x"}} trailing)",
        R"([{"type":"user","message":{"content":"an array"}}])",
        R"({"type":"user","message":{"content":"\u005bescaped] note"}})",
        R"({"type":"user","message":{"content":"<command-name>/x</command-name>"}})",
        R"({"type":"user","message":{"content":"after a command"}})",
        R"({"type":"system","subtype":"compact_boundary"})",
        R"({"type":"user","message":{"content":"continuation"}})",
        R"({"type":"assistant","message":{"content":)"
        R"([{"type":"tool_use","name":"Skill","id":"s"}]}})",
        R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"s"}]}})",
        R"({"type":"user","message":{"content":"skill body"}})",
        R"({"type":"user","message":{"content":"prompt again"}})"};
    std::string all;
    for (const auto& r : rows) {
        EXPECT_EQ(count_turns(r), full_count({r})) << r;
        all += r + "\n";
    }
    EXPECT_EQ(count_turns(all), full_count(rows));
}

// A session file larger than a listing's head + tail: its turns counted whole within bounds,
// and what is appended counted by reading only that (a line still being written counted once
// its end comes), so an unopened session's turns stay known as it grows.
TEST(ClaudeProjectsListing, LargerFilesAndWhatIsAppendedAreCounted) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("sluice-count-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "0b5c1e6a-2f0d-4c55-9a8e-3f1f4c2f9a10.jsonl";
    const std::string pad(2000, 'x');
    std::string text;
    const auto turn = [&pad](int i) {
        return R"({"type":"user","cwd":"/w/p","message":{"role":"user","content":"prompt )"
               + std::to_string(i)
               + R"("}})"
                 "\n"
                 R"({"type":"assistant","message":{"role":"assistant",)"
                 R"("content":[{"type":"text","text":")"
               + pad
               + R"("}]}})"
                 "\n";
    };
    for (int i = 0; i < 40; ++i) {
        text += turn(i);
    }
    ASSERT_GT(text.size(), FOREIGN_LIST_HEAD_BYTES + FOREIGN_LIST_TAIL_BYTES);
    std::ofstream(file, std::ios::binary) << text;
    auto l = list_session_file(file);
    ASSERT_TRUE(l.has_value());
    ASSERT_TRUE(l->turns.has_value()) << "a file of a few hundred KiB is counted";
    EXPECT_EQ(*l->turns, 40U);
    EXPECT_EQ(*l->turns, count_turns(text));

    // Appended: a turn and half of the next one's first line.
    const auto next = turn(40) + turn(41);
    const auto cut = turn(40).size() + 10;
    std::ofstream(file, std::ios::binary | std::ios::app) << next.substr(0, cut);
    ASSERT_TRUE(relist_if_changed(file, *l));
    ASSERT_TRUE(l->turns.has_value());
    EXPECT_EQ(*l->turns, 41U);
    std::ofstream(file, std::ios::binary | std::ios::app) << next.substr(cut);
    ASSERT_TRUE(relist_if_changed(file, *l));
    ASSERT_TRUE(l->turns.has_value());
    EXPECT_EQ(*l->turns, 42U);
    EXPECT_EQ(*l->turns, count_turns(text + next));

    // More appended at once than one count reads: unknown, not wrong.
    std::string lots;
    for (int i = 0; lots.size() <= FOREIGN_COUNT_STEP_BYTES; ++i) {
        lots += turn(100 + i);
    }
    std::ofstream(file, std::ios::binary | std::ios::app) << lots;
    ASSERT_TRUE(relist_if_changed(file, *l));
    EXPECT_FALSE(l->turns.has_value());
    std::filesystem::remove_all(dir);
}

} // namespace
