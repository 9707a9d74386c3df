// Tests of SubagentIndex (hub/subagents.hpp) on real session files: read on, not read again.
#include "e2e/claude_tree.hpp"
#include "support/files.hpp"

#include <sluice/hub/subagents.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace {

using namespace sluice::test::claude_tree;
using sluice::hub::Subagent;
using sluice::hub::SubagentIndex;
using sluice::test::append_to;
using sluice::test::fixture_path;
using sluice::test::slurp;
using sluice::test::TempDir;

std::map<std::string, Subagent> by_id(const std::vector<Subagent>& list) {
    std::map<std::string, Subagent> out;
    for (const auto& s : list) {
        out[s.agent_id] = s;
    }
    return out;
}

constexpr const char* ALICE = "a36efb2a1231c41e2";
constexpr const char* ALICE_CALL = "toolu_017y4gSjMWeQ3L2DAKiygU2y";

TEST(SubagentIndex, ASecondRequestReadsOnlyWhatWasAppended) {
    TempDir tree;
    const fs::path dir = tree.path();
    build_tree(dir);
    const auto session = session_path(dir, SUBAGENT_SESSION);
    const auto size = fs::file_size(session);
    SubagentIndex index(session);
    auto subs = by_id(index.list());
    ASSERT_EQ(subs.size(), 1U);
    EXPECT_EQ(subs.at(ALICE).tool_use_id, ALICE_CALL);
    EXPECT_EQ(subs.at(ALICE).rows, 18U);
    EXPECT_EQ(index.session_bytes_read(), size);

    // Asked again: the same answer, and the session file is not read again.
    EXPECT_EQ(by_id(index.list()).at(ALICE).tool_use_id, ALICE_CALL);
    EXPECT_EQ(index.session_bytes_read(), size) << "a second request rescanned the session file";

    // Appended: a new Task call, its sub-agent running (linked by its prompt), alice grown.
    const std::string call =
        R"({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use",)"
        R"("id":"toolu_new","name":"Task","input":{"description":"a new one","prompt":"P1"}}]}})"
        "\n";
    append_to(session, call);
    put(dir / SUBAGENT_SESSION.project / SUBAGENT_SESSION.id / "subagents" / "agent-new1.jsonl",
        R"({"type":"user","sessionId":"x","message":{"role":"user","content":"P1"}})"
        "\n");
    append_to(
        dir / SUBAGENT_SESSION.project / SUBAGENT_SESSION.id / "subagents"
            / (std::string("agent-") + ALICE + ".jsonl"),
        R"({"type":"assistant","message":{"content":[]}})"
        "\n"
        R"({"type":"assistant","message":{"content":[)"); // a row still being written
    subs = by_id(index.list());
    ASSERT_EQ(subs.size(), 2U);
    EXPECT_EQ(subs.at("new1").tool_use_id, "toolu_new");
    EXPECT_EQ(subs.at("new1").description, "a new one");
    EXPECT_EQ(subs.at(ALICE).tool_use_id, ALICE_CALL);
    EXPECT_EQ(subs.at(ALICE).rows, 19U) << "the torn row waits";
    EXPECT_EQ(index.session_bytes_read(), size + call.size()) << "only the appended bytes";

    // Truncated (Claude Code rewrote it shorter): read again from its start.
    put(session, call);
    subs = by_id(index.list());
    EXPECT_EQ(subs.at("new1").tool_use_id, "toolu_new");
    EXPECT_EQ(subs.at(ALICE).tool_use_id, "") << "its call is gone with the old rows";
    EXPECT_EQ(index.session_bytes_read(), size + 2 * call.size());

    // Replaced by another file at the path (rename): read again from its start.
    const auto fresh = dir / "fresh.jsonl";
    put(fresh, slurp(fixture_path(SUBAGENT_SESSION.fixture)));
    fs::rename(fresh, session);
    subs = by_id(index.list());
    EXPECT_EQ(subs.at(ALICE).tool_use_id, ALICE_CALL);
    EXPECT_EQ(subs.at("new1").tool_use_id, "") << "the new call is not in the replacement";
    EXPECT_EQ(index.session_bytes_read(), 2 * size + 2 * call.size());

    // Rewritten in place, longer, with another start: read again from its start.
    const auto rewritten = call + slurp(fixture_path(SUBAGENT_SESSION.fixture));
    {
        std::ofstream out(session, std::ios::binary | std::ios::in | std::ios::out);
        out << rewritten;
    }
    subs = by_id(index.list());
    EXPECT_EQ(subs.at("new1").tool_use_id, "toolu_new");
    EXPECT_EQ(subs.at(ALICE).tool_use_id, ALICE_CALL);
    EXPECT_EQ(index.session_bytes_read(), 2 * size + 2 * call.size() + rewritten.size());
}

// Older Claude Code wrote sub-agents inline, as `isSidechain` rows of the session file.
constexpr const char* INLINE_FIXTURE =
    "d-kimuson_claude-code-viewer/"
    "mock-global-claude-dir_projects_sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";

TEST(SubagentIndex, InlineRowsFollowAppendsWithoutReadingTheFileAgain) {
    TempDir tree;
    const auto session =
        fs::path(tree.path()) / "-p" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    put(session, slurp(fixture_path(INLINE_FIXTURE)));
    const auto size = fs::file_size(session);
    SubagentIndex index(session);
    const auto subs = index.list();
    ASSERT_EQ(subs.size(), 5U);
    const auto& first = subs.front();
    auto rows = index.inline_rows(first.agent_id);
    ASSERT_TRUE(rows.has_value());
    ASSERT_EQ(rows->size(), first.rows);
    const auto last = json::parse(rows->back()).at("uuid").as_string();
    const std::string more = std::string(R"({"type":"assistant","isSidechain":true,"uuid":"zz1",)")
                             + R"("parentUuid":")" + std::string(last)
                             + R"(","message":{"role":"assistant","content":[]}})" + "\n";
    append_to(session, more);
    rows = index.inline_rows(first.agent_id);
    ASSERT_TRUE(rows.has_value());
    ASSERT_EQ(rows->size(), first.rows + 1);
    EXPECT_EQ(rows->back(), more.substr(0, more.size() - 1));
    EXPECT_EQ(index.session_bytes_read(), size + more.size()) << "only the appended bytes";
    EXPECT_FALSE(index.inline_rows("inline-nope").has_value());
}

} // namespace
