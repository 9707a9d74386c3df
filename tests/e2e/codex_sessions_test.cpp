// End to end: `sluice serve --codex-sessions DIR` over a sessions folder laid out as Codex CLI
// lays out ~/.codex/sessions (YYYY/MM/DD/rollout-*.jsonl), built in a temp dir from the real
// rollouts in tests/fixtures/codex: listing, opening, live follow, new rollouts, read-only, and
// nothing written under DIR.
#include "e2e/claude_tree.hpp"
#include "e2e/codex_world.hpp"
#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace sluice::test;
using sluice::test::claude_tree::seat_of;
using sluice::test::claude_tree::seats_of;
using sluice::test::claude_tree::snapshot;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A rollout of the fixtures and where codex would have written it.
struct Rollout {
    const char* fixture;
    const char* thread;
    const char* title; // its first prompt
};

constexpr Rollout RESUMED{
    "resumed.jsonl", "01a24e22-5b54-7fc0-aeab-c87c1aec18db", "think about the word pelican"};
constexpr Rollout EXEC{
    "exec-approvals.jsonl",
    "01a24e22-680f-77b2-b9cf-476f93998689",
    "run:echo hi-from-codex > out.txt; cat out.txt"};
constexpr Rollout INTERRUPTED{
    "interrupted.jsonl", "01a24e22-7049-7b81-81bf-a6ae5b671b91", "please be slow"};

std::vector<std::string> fixture_lines(const Rollout& r) {
    return read_lines(std::string(SLUICE_SOURCE_DIR) + "/tests/fixtures/codex/" + r.fixture);
}

std::string joined(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to && i < lines.size(); ++i) {
        out += lines[i] + "\n";
    }
    return out;
}

fs::path rollout_path(const fs::path& dir, const Rollout& r, const char* day = "2026/12/07") {
    return dir / day / ("rollout-2026-12-07T01-33-24-" + std::string(r.thread) + ".jsonl");
}

std::string seat_id(const Rollout& r) {
    return "codex-" + std::string(r.thread);
}

std::vector<std::string> serve_args(const TempDir& data, const fs::path& dir) {
    return {
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        data.path(),
        "--codex-sessions",
        dir.string()};
}

// The sessions folder: RESUMED and EXEC whole, INTERRUPTED with its first turn only (lines
// 1-12: through its turn_aborted) so a test can append the second.
constexpr std::size_t INTERRUPTED_FIRST_TURN = 12;

void build_sessions(const fs::path& dir) {
    for (const auto* r : {&RESUMED, &EXEC}) {
        const auto lines = fixture_lines(*r);
        spill(rollout_path(dir, *r), joined(lines, 0, lines.size()));
    }
    spill(
        rollout_path(dir, INTERRUPTED),
        joined(fixture_lines(INTERRUPTED), 0, INTERRUPTED_FIRST_TURN));
    // Not rollouts: neither is a seat.
    spill(dir / "2026/12/07" / "notes.jsonl", "{}\n");
    spill(dir / "2026/12/07" / "rollout-oops.jsonl", "{}\n");
}

json::value connected_of(const std::vector<sluice::sse::Event>& events) {
    for (const auto& e : events) {
        if (e.type == "connected") {
            return json::parse(e.data);
        }
    }
    return nullptr;
}

TEST(CodexSessions, ListsRolloutsWithFirstPromptsAndSessionMeta) {
    TempDir sessions;
    TempDir data;
    const fs::path dir = sessions.path();
    build_sessions(dir);
    const auto before = snapshot(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto seats = seats_of(hub);
    ASSERT_EQ(seats.size(), 3U) << "only rollouts are seats";
    for (const auto* r : {&RESUMED, &EXEC, &INTERRUPTED}) {
        ASSERT_TRUE(seats.contains(seat_id(*r))) << r->thread;
        const auto& seat = seats.at(seat_id(*r));
        EXPECT_EQ(seat.at("source").as_string(), "codex");
        EXPECT_EQ(seat.at("agent").as_string(), "codex");
        EXPECT_EQ(seat.at("title").as_string(), r->title) << "the first prompt, not the context";
        EXPECT_EQ(seat.at("project").as_string(), "/work/scratch/cxf/work");
        EXPECT_EQ(seat.at("state").as_string(), "idle");
        EXPECT_TRUE(seat.at("live").as_bool()) << "just written";
    }
    EXPECT_EQ(seats.at(seat_id(RESUMED)).at("turns").as_int64(), 2);
    EXPECT_EQ(seats.at(seat_id(INTERRUPTED)).at("turns").as_int64(), 1);

    // Read-only: a prompt, a rename and a delete are refused with the reason.
    const auto base = hub.base() + "/v1/seats/" + seat_id(EXEC);
    for (const auto& [method, path, body] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"POST", "/messages", R"({"text":"hello"})"},
             {"PATCH", "", R"({"name":"x"})"},
             {"DELETE", "", ""}}) {
        auto r = http(method, base + path, body);
        EXPECT_EQ(r.status, 409U) << method << " " << path << " " << r.body;
        EXPECT_NE(r.body.find("Codex session"), std::string::npos) << r.body;
    }
    EXPECT_EQ(seats_of(hub).size(), 3U);
    EXPECT_EQ(snapshot(dir), before) << "the hub wrote under the sessions folder";
}

TEST(CodexSessions, OpensARolloutAsFramesAndPagesItsTurns) {
    TempDir sessions;
    TempDir data;
    const fs::path dir = sessions.path();
    build_sessions(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto id = seat_id(EXEC);
    SseClient sse(hub.base() + "/v1/seats/" + id + "/events");
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !connected_of(ev).is_null(); }));
    const auto connected = connected_of(sse.events());
    const auto& frames = connected.at("window").at("frames").as_array();
    // 32 rollout lines, 10 frames: 2 prompts, 2 commands and their outputs, 2 answers, 2 ends.
    ASSERT_EQ(frames.size(), 10U) << connected;
    EXPECT_EQ(connected.at("seq").as_int64(), 9);
    EXPECT_EQ(frames.at(0).at("type").as_string(), "user");
    const auto& call = frames.at(1).at("message").at("content").at(0);
    EXPECT_EQ(call.at("name").as_string(), "Bash");
    EXPECT_EQ(call.at("input").at("command").as_string(), std::string(EXEC.title).substr(4));
    const auto& output = frames.at(2).at("message").at("content").at(0);
    EXPECT_EQ(output.at("type").as_string(), "tool_result");
    EXPECT_EQ(output.at("content").as_string(), "hi-from-codex\n");
    EXPECT_EQ(frames.at(4).at("type").as_string(), "result");
    const auto seat = seat_of(hub, id);
    EXPECT_EQ(seat.at("turns").as_int64(), 2);
    EXPECT_EQ(seat.at("frames").as_int64(), 10);
    // A page of the newest turn.
    auto page = http("GET", hub.base() + "/v1/seats/" + id + "/history?turns=1");
    ASSERT_EQ(page.status, 200U) << page.body;
    const auto& turns = page.json.at("turns").as_array();
    ASSERT_EQ(turns.size(), 1U);
    EXPECT_EQ(turns.at(0).at("first").as_int64(), 5);
    EXPECT_EQ(
        turns.at(0).at("frames").at(0).at("message").at("content").at(0).at("text").as_string(),
        "run:rm -f README.txt");
    // The whole frame by its seq is the translated row.
    auto whole = http("GET", hub.base() + "/v1/seats/" + id + "/frames/1");
    ASSERT_EQ(whole.status, 200U) << whole.body;
    EXPECT_EQ(whole.json.at("message").at("content").at(0).at("name").as_string(), "Bash");
    // Its index lives in the data dir.
    EXPECT_TRUE(fs::exists(fs::path(data.path()) / "foreign" / id / "index.sidx"));
}

TEST(CodexSessions, AppendedLinesArriveLiveAndNewRolloutsAppear) {
    TempDir sessions;
    TempDir data;
    const fs::path dir = sessions.path();
    build_sessions(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto id = seat_id(INTERRUPTED);
    SseClient sse(hub.base() + "/v1/seats/" + id + "/events");
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !connected_of(ev).is_null(); }));
    EXPECT_EQ(connected_of(sse.events()).at("window").at("frames").as_array().size(), 2U)
        << "the prompt and the interrupt's end";
    // Codex runs the second turn: its lines are appended.
    const auto lines = fixture_lines(INTERRUPTED);
    append_to(rollout_path(dir, INTERRUPTED), joined(lines, INTERRUPTED_FIRST_TURN, lines.size()));
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return frames_of(ev).size() >= 3; }, 10s));
    const auto live = frames_of(sse.events());
    ASSERT_EQ(live.size(), 3U);
    EXPECT_EQ(live.at(0).first, 2);
    EXPECT_EQ(
        live.at(0).second.at("message").at("content").at(0).at("text").as_string(),
        "after the interrupt");
    EXPECT_EQ(live.at(2).second.at("type").as_string(), "result");
    EXPECT_EQ(seat_of(hub, id).at("turns").as_int64(), 2) << "counted as it came";

    // A new thread in a new day's folder appears as a seat, titled from its first prompt.
    const Rollout fresh{EXEC.fixture, "01a24e22-0000-7000-8000-000000000001", EXEC.title};
    const auto fresh_path = rollout_path(dir, fresh, "2026/12/09");
    fs::create_directories(fresh_path.parent_path());
    const auto exec = fixture_lines(EXEC);
    append_to(fresh_path, joined(exec, 0, 9)); // through the first prompt
    bool seen = false;
    for (int i = 0; i < 100 && !seen; ++i) {
        const auto s = seats_of(hub);
        seen = s.contains(seat_id(fresh))
               && s.at(seat_id(fresh)).at("title").as_string() == fresh.title;
        if (!seen) {
            std::this_thread::sleep_for(50ms);
        }
    }
    EXPECT_TRUE(seen) << "a rollout in a new day's folder is listed with its first prompt";
}

} // namespace

namespace {

using namespace sluice::test;
using namespace sluice::test::codex_e2e;

// A Codex session continued from the page or the CLI: a codex seat whose history starts with
// the rollout's turns, resuming its thread in the real codex (the rollout lies in the
// CODEX_HOME codex runs with, as ~/.codex/sessions does).
TEST(CodexSessions, ContinuesARolloutAsACodexSeatThatResumesItsThread) {
    SLUICE_NEED_CODEX();
    CodexWorld w;
    const fs::path sessions = w.home / "sessions";
    auto lines = fixture_lines(EXEC);
    for (auto& line : lines) { // the session ran in this world's folder
        for (std::size_t at = 0;
             (at = line.find("/work/scratch/cxf/work", at)) != std::string::npos;) {
            line.replace(at, 22, w.cwd.string());
            at += w.cwd.string().size();
        }
    }
    spill(rollout_path(sessions, EXEC), joined(lines, 0, lines.size()));
    auto args = w.serve_args({"--codex-sessions", sessions.string()});
    SluiceProcess hub(args);
    auto r = http("POST", hub.base() + "/v1/seats/" + seat_id(EXEC) + "/continue", "{}");
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    EXPECT_EQ(seat_of(hub, seat).at("agent").as_string(), "codex");
    const auto meta = json::parse(slurp(fs::path(w.data.path()) / "seats" / seat / "meta.json"));
    EXPECT_EQ(meta.at("session_id").as_string(), EXEC.thread) << "it resumes the thread";
    r = http("POST", hub.base() + "/v1/seats/" + seat_id(EXEC) + "/continue", "{}");
    EXPECT_EQ(r.status, 200U) << "continued before: the same seat " << r.body;
    EXPECT_EQ(r.json.at("seat").as_string(), seat);

    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    ASSERT_TRUE(a.wait_for([](const auto& ev) { return !connected_of(ev).is_null(); }));
    EXPECT_NE(
        json::serialize(connected_of(a.events()).at("window")).find("hi-from-codex"),
        std::string::npos)
        << "the seat's history starts with the session's turns";
    const auto t = send(hub, seat, "go on: which command did you run?");
    ASSERT_TRUE(a.wait_for(ended(t), 90s)) << "turn " << t;
    ASSERT_FALSE(w.fake.requests().empty());
    EXPECT_NE(json::serialize(w.fake.requests().back()).find("hi-from-codex"), std::string::npos)
        << "codex resumed the thread";
    EXPECT_FALSE(seats_of(hub).contains(seat_id(EXEC)))
        << "the session is listed once, as the seat";
}

} // namespace
