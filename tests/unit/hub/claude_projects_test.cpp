// Unit tests of the listing rules of hub/claude_projects.hpp (pure: bytes in, listing out).
#include <sluice/hub/claude_projects.hpp>

#include <gtest/gtest.h>

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

} // namespace
