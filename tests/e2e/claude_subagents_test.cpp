// End to end: the sub-agent transcripts of Claude Code sessions under `--claude-projects` —
// never seats of their own, listed under their session with the Task call each answers, paged
// as history, followed while written; and listed sessions shown alike before and after their
// seat is made.
#include "e2e/claude_tree.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_tree;
using sluice::test::slurp;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* SECOND_AGENT_FILE =
    "iansherr_claude-code-log/"
    "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_"
    "subagents_agent-aef063ba534d73153.jsonl";
// The session the old-layout agent file (agent-c8d9b115.jsonl) belongs to.
inline constexpr Session OLD_LAYOUT_SESSION{
    "iansherr_claude-code-log/"
    "test_test_data_real_projects_-src-deep-manifest_a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
    "-src-deep-manifest",
    "a7da6a22-facc-4fcd-8bab-f83c87862004"};

// The tree, with a second sub-agent under SUBAGENT_SESSION and an old-layout session whose
// agent file lies beside it.
fs::path sub_dir(const fs::path& dir) {
    return dir / SUBAGENT_SESSION.project / SUBAGENT_SESSION.id / "subagents";
}

void build_sub_tree(const fs::path& dir) {
    build_tree(dir);
    put(sub_dir(dir) / "agent-aef063ba534d73153.jsonl", slurp(fixture_path(SECOND_AGENT_FILE)));
    put(session_path(dir, OLD_LAYOUT_SESSION), slurp(fixture_path(OLD_LAYOUT_SESSION.fixture)));
    put(dir / OLD_LAYOUT_SESSION.project / "agent-c8d9b115.jsonl",
        slurp(fixture_path(OLD_AGENT_FILE)));
}

std::map<std::string, json::object> subagents_of(const SluiceProcess& hub, const Session& s) {
    auto r = http("GET", hub.base() + "/v1/seats/" + seat_id(s) + "/subagents");
    EXPECT_EQ(r.status, 200U) << r.body;
    std::map<std::string, json::object> out;
    if (r.status != 200U) {
        return out;
    }
    for (const auto& a : r.json.at("subagents").as_array()) {
        out[std::string(a.at("agent_id").as_string())] = a.as_object();
    }
    // The page's link: every linked Task call maps to its agent.
    for (const auto& [tool, agent] : r.json.at("by_tool_use").as_object()) {
        EXPECT_EQ(out.at(std::string(agent.as_string())).at("tool_use_id"), json::value(tool));
    }
    return out;
}

// The frames of a history page, oldest first.
std::vector<json::value> page_frames(const json::value& page) {
    std::vector<json::value> out;
    for (const auto& t : page.at("turns").as_array()) {
        for (const auto& f : t.at("frames").as_array()) {
            out.push_back(f);
        }
    }
    return out;
}

std::string content_text(const json::value& row) {
    const auto& c = row.at("message").at("content");
    if (c.is_string()) {
        return std::string(c.as_string());
    }
    for (const auto& b : c.as_array()) {
        if (b.at("type") == "text") {
            return std::string(b.at("text").as_string());
        }
    }
    return {};
}

TEST(ClaudeSubagents, AreNoSeatsButListedUnderTheirSessionWithTheirTaskCall) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_sub_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto seats = seats_of(hub);
    EXPECT_EQ(seats.size(), 4U) << "three sub-agent files, none a seat";
    for (const auto& [id, seat] : seats) {
        EXPECT_EQ(id.find("agent"), std::string::npos) << id;
    }
    // Claude Code's layout: <session>/subagents/agent-<id>.jsonl, linked by the tool result's
    // toolUseResult.agentId to the Agent tool_use that started it.
    auto subs = subagents_of(hub, SUBAGENT_SESSION);
    ASSERT_EQ(subs.size(), 2U);
    const auto& alice = subs.at("a36efb2a1231c41e2");
    EXPECT_EQ(alice.at("tool_use_id").as_string(), "toolu_017y4gSjMWeQ3L2DAKiygU2y");
    EXPECT_EQ(alice.at("description").as_string(), "Round 2: alice comparison");
    EXPECT_EQ(alice.at("rows").as_int64(), 18);
    EXPECT_TRUE(alice.at("live").as_bool()) << "just written";
    const auto& bob = subs.at("aef063ba534d73153");
    EXPECT_EQ(bob.at("tool_use_id").as_string(), "toolu_01N26s4U6vDxE1NRAH5CyCNf");
    EXPECT_EQ(bob.at("description").as_string(), "Round 2: bob comparison");
    EXPECT_EQ(bob.at("rows").as_int64(), 16);
    // The old layout: agent-<id>.jsonl beside the sessions, its rows naming its session.
    subs = subagents_of(hub, OLD_LAYOUT_SESSION);
    ASSERT_EQ(subs.size(), 1U);
    EXPECT_EQ(subs.at("c8d9b115").at("tool_use_id").as_string(), "toolu_01MmDqMXjZLvzbNFLGH2ZA3k");
    EXPECT_EQ(
        subs.at("c8d9b115").at("description").as_string(), "Explore ZIP processing implementation");
    // A session with none (the old-layout file beside it belongs to another session).
    EXPECT_TRUE(subagents_of(hub, SUMMARY_SESSION).empty());
    // Not a Claude Code session, or no such seat.
    auto r = http("GET", hub.base() + "/v1/seats/c-nope/subagents");
    EXPECT_EQ(r.status, 404U) << r.body;
}

TEST(ClaudeSubagents, HistoryIsServedAsASeatsHistory) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_sub_tree(dir);
    const auto before = snapshot(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto base = hub.base() + "/v1/seats/" + seat_id(SUBAGENT_SESSION) + "/subagents/";
    auto r = http("GET", base + "a36efb2a1231c41e2/history");
    ASSERT_EQ(r.status, 200U) << r.body;
    auto frames = page_frames(r.json);
    ASSERT_EQ(frames.size(), 18U);
    // Its rows, in order: the prompt the Agent call gave it first.
    const auto rows = read_lines(fixture_path(SUBAGENT_FILE));
    EXPECT_EQ(frames.front(), json::parse(rows.front()));
    EXPECT_EQ(frames.back(), json::parse(rows.back()));
    EXPECT_TRUE(content_text(frames.front()).starts_with("You are **alice** (round 2)"));
    // A page of fewer frames pages back by its cursor like a seat's.
    r = http("GET", base + "a36efb2a1231c41e2/history?before=5");
    ASSERT_EQ(r.status, 200U) << r.body;
    frames = page_frames(r.json);
    ASSERT_EQ(frames.size(), 5U);
    EXPECT_EQ(frames.back(), json::parse(rows.at(4)));
    // The old layout too.
    r = http(
        "GET",
        hub.base() + "/v1/seats/" + seat_id(OLD_LAYOUT_SESSION) + "/subagents/c8d9b115/history");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(page_frames(r.json).size(), read_lines(fixture_path(OLD_AGENT_FILE)).size());
    // No such sub-agent (of this session), or a name that is none.
    for (const auto* agent : {"c8d9b115", "nope", "..%2F..%2Fx", "a36efb2a1231c41e2x"}) {
        r = http("GET", base + agent + "/history");
        EXPECT_EQ(r.status, 404U) << agent << " " << r.body;
    }
    r = http("GET", base + "a36efb2a1231c41e2/history?turns=0");
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_EQ(snapshot(dir), before) << "nothing written under the projects folder";
}

TEST(ClaudeSubagents, LiveRowsOfASubAgentAreServedAndMakeNoSeat) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_sub_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto parent = seat_id(SUBAGENT_SESSION);
    SseClient sse(hub.base() + "/v1/seats/" + parent + "/events");
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !ev.empty(); }));
    const auto frames_before = seat_of(hub, parent).at("frames").as_int64();
    // A sub-agent still running: its file grows, and a new one appears with no tool result
    // naming it yet (linked by its prompt, the Agent call's input.prompt).
    std::string prompt;
    for (const auto& line : read_lines(fixture_path(SUBAGENT_SESSION.fixture))) {
        if (line.find("toolu_0151DrVyXBXfb63SXGNF1qDb") != std::string::npos
            && line.find("\"tool_use\"") != std::string::npos) {
            const auto row = json::parse(line);
            for (const auto& b : row.at("message").at("content").as_array()) {
                if (b.at("type") == "tool_use") {
                    prompt = std::string(b.at("input").at("prompt").as_string());
                }
            }
        }
    }
    ASSERT_FALSE(prompt.empty());
    json::object first{
        {"type", "user"},
        {"isSidechain", true},
        {"agentId", "alive0123"},
        {"sessionId", SUBAGENT_SESSION.id},
        {"message", json::object{{"role", "user"}, {"content", prompt}}}};
    put(sub_dir(dir) / "agent-alive0123.jsonl", json::serialize(first) + "\n");
    const auto grown = sub_dir(dir) / "agent-a36efb2a1231c41e2.jsonl";
    {
        std::ofstream out(grown, std::ios::binary | std::ios::app);
        for (int i = 0; i < 5; ++i) {
            json::object row{
                {"type", i % 2 == 0 ? "assistant" : "user"},
                {"isSidechain", true},
                {"agentId", "a36efb2a1231c41e2"},
                {"message",
                 json::object{
                     {"role", i % 2 == 0 ? "assistant" : "user"},
                     {"content",
                      json::array{json::object{
                          {"type", "text"}, {"text", "live " + std::to_string(i)}}}}}}};
            out << json::serialize(row) << "\n" << std::flush;
            std::this_thread::sleep_for(20ms);
        }
        out << R"({"type":"assistant","isSidechain":true,"message":{"content":[{"type":"te)";
    }
    std::this_thread::sleep_for(300ms); // past the live bound: any event has been handled
    EXPECT_EQ(seats_of(hub).size(), 4U) << "no seat for a sub-agent file, old or new";
    EXPECT_EQ(seat_of(hub, parent).at("frames").as_int64(), frames_before)
        << "a sub-agent's rows are not its session's";
    auto subs = subagents_of(hub, SUBAGENT_SESSION);
    ASSERT_EQ(subs.size(), 3U);
    EXPECT_EQ(subs.at("a36efb2a1231c41e2").at("rows").as_int64(), 23) << "the torn row waits";
    EXPECT_EQ(subs.at("alive0123").at("tool_use_id").as_string(), "toolu_0151DrVyXBXfb63SXGNF1qDb");
    EXPECT_EQ(subs.at("alive0123").at("description").as_string(), "Round 2: carol comparison");
    EXPECT_TRUE(subs.at("alive0123").at("live").as_bool());
    auto r =
        http("GET", hub.base() + "/v1/seats/" + parent + "/subagents/a36efb2a1231c41e2/history");
    ASSERT_EQ(r.status, 200U) << r.body;
    const auto frames = page_frames(r.json);
    ASSERT_EQ(frames.size(), 23U);
    EXPECT_EQ(content_text(frames.back()), "live 4");
    // The session itself still serves, and its stream is still open.
    r = http("GET", hub.base() + "/v1/seats/" + parent + "/history?turns=1");
    EXPECT_EQ(r.status, 200U) << r.body;
}

// Bytes the process has read by read(2)/pread(2) so far (/proc/PID/io `rchar`), sockets included.
std::uint64_t bytes_read_by(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/io");
    std::string key;
    std::uint64_t value = 0;
    while (in >> key >> value) {
        if (key == "rchar:") {
            return value;
        }
    }
    return 0;
}

TEST(ClaudeSubagents, TheListFollowsItsSessionFileWithoutReadingItAgain) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_sub_tree(dir);
    const auto session = session_path(dir, SUBAGENT_SESSION);
    const auto size = fs::file_size(session);
    SluiceProcess hub(serve_args(data, dir));
    auto subs = subagents_of(hub, SUBAGENT_SESSION);
    ASSERT_EQ(subs.size(), 2U);
    // The search index reads each session file once, in the background: let it finish first,
    // so the bytes counted below are the request's alone.
    for (int i = 0; i < 200; ++i) {
        const auto ix = http("GET", hub.base() + "/v1/search?q=zzzz").json;
        if (ix.is_object() && ix.as_object().contains("indexing")
            && ix.at("indexing").at("complete") == true) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Asked again: the hub reads far less than the session file (the request, the folder).
    const auto before = bytes_read_by(hub.pid());
    subs = subagents_of(hub, SUBAGENT_SESSION);
    const auto again = bytes_read_by(hub.pid()) - before;
    EXPECT_LT(again, size / 4) << "a second request read " << again << " bytes; the file has "
                               << size;
    EXPECT_EQ(
        subs.at("a36efb2a1231c41e2").at("tool_use_id").as_string(),
        "toolu_017y4gSjMWeQ3L2DAKiygU2y");
    // Appended: a new Task call, and the sub-agent it started.
    std::ofstream(session, std::ios::binary | std::ios::app)
        << R"({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use",)"
           R"("id":"toolu_new","name":"Task","input":{"description":"a new one","prompt":"P1"}}]}})"
        << "\n";
    put(sub_dir(dir) / "agent-new1.jsonl",
        R"({"type":"user","sessionId":"x","message":{"role":"user","content":"P1"}})"
        "\n");
    subs = subagents_of(hub, SUBAGENT_SESSION);
    ASSERT_EQ(subs.size(), 3U);
    EXPECT_EQ(subs.at("new1").at("tool_use_id").as_string(), "toolu_new");
    EXPECT_EQ(subs.at("new1").at("description").as_string(), "a new one");
    // Truncated to its first line: the calls read before are gone.
    const auto first_line = read_lines(session.string()).front() + "\n";
    { std::ofstream(session, std::ios::binary | std::ios::trunc) << first_line; }
    subs = subagents_of(hub, SUBAGENT_SESSION);
    EXPECT_TRUE(subs.at("new1").at("tool_use_id").is_null()) << "its call went with the rows";
    EXPECT_TRUE(subs.at("a36efb2a1231c41e2").at("tool_use_id").is_null());
    // Replaced (a new file renamed over it): read whole again.
    put(dir / "fresh.jsonl", slurp(fixture_path(SUBAGENT_SESSION.fixture)));
    fs::rename(dir / "fresh.jsonl", session);
    subs = subagents_of(hub, SUBAGENT_SESSION);
    EXPECT_EQ(
        subs.at("a36efb2a1231c41e2").at("tool_use_id").as_string(),
        "toolu_017y4gSjMWeQ3L2DAKiygU2y");
    EXPECT_EQ(
        subs.at("aef063ba534d73153").at("tool_use_id").as_string(),
        "toolu_01N26s4U6vDxE1NRAH5CyCNf");
    EXPECT_TRUE(subs.at("new1").at("tool_use_id").is_null());
}

// Older Claude Code wrote sub-agents inline: `isSidechain` rows in the session file itself.
inline constexpr Session INLINE_SESSION{
    "d-kimuson_claude-code-viewer/"
    "mock-global-claude-dir_projects_sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "-sample-project",
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b"};

TEST(ClaudeSubagents, InlineSidechainsAreListedUnderTheirTaskCallAndPaged) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    put(session_path(dir, INLINE_SESSION), slurp(fixture_path(INLINE_SESSION.fixture)));
    SluiceProcess hub(serve_args(data, dir));
    ASSERT_EQ(seats_of(hub).size(), 1U);
    const auto subs = subagents_of(hub, INLINE_SESSION);
    ASSERT_EQ(subs.size(), 5U) << "five Task calls, five sidechains";
    std::set<std::string> calls;
    std::int64_t rows = 0;
    for (const auto& [id, a] : subs) {
        EXPECT_TRUE(id.starts_with("inline-")) << id;
        ASSERT_TRUE(a.at("tool_use_id").is_string()) << id << " is linked by its prompt";
        calls.emplace(a.at("tool_use_id").as_string());
        EXPECT_FALSE(a.at("description").as_string().empty()) << id;
        rows += a.at("rows").as_int64();
    }
    EXPECT_EQ(calls.size(), 5U) << "each to its own call";
    EXPECT_EQ(rows, 405) << "every sidechain row of the fixture, in one chain or another";
    const auto& [id, a] = *subs.begin();
    auto r = http(
        "GET",
        hub.base() + "/v1/seats/" + seat_id(INLINE_SESSION) + "/subagents/" + id + "/history");
    ASSERT_EQ(r.status, 200U) << r.body;
    const auto frames = page_frames(r.json);
    ASSERT_EQ(static_cast<std::int64_t>(frames.size()), a.at("rows").as_int64());
    for (const auto& f : frames) {
        EXPECT_TRUE(f.at("isSidechain").as_bool());
    }
    EXPECT_EQ(frames.front().at("uuid").as_string(), id.substr(std::string("inline-").size()));
    r = http(
        "GET",
        hub.base() + "/v1/seats/" + seat_id(INLINE_SESSION) + "/subagents/inline-nope/history");
    EXPECT_EQ(r.status, 404U) << r.body;
}

TEST(ClaudeProjects, ListedSessionsShowTheSameBeforeAndAfterTheirSeatIsMade) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_sub_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto listed = seats_of(hub); // none made a seat yet: each answers from its listing
    ASSERT_EQ(listed.size(), 4U);
    for (const auto& [id, seat] : listed) {
        const auto one = seat_of(hub, id); // its first look-up makes the seat
        for (const auto& [key, value] : seat) {
            EXPECT_EQ(one.at(key), value) << id << " " << key;
        }
    }
    EXPECT_EQ(seats_of(hub), listed) << "the seats made show what their listings showed";
}

} // namespace
