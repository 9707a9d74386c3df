// End-to-end tests of a claude seat's controls with the real `sluice serve` and a stand-in
// Claude Code (tests/support/fake_agent.py behind --claude-bin): permission mode and model
// changed by the owner (PATCH → set_permission_mode/set_model, kept for later processes),
// `session_state_changed: requires_action` as the seat's `waiting` state, and row types sluice
// does not know kept as frames; and, with the pinned Claude Code on the fake Messages API, the
// model a seat shows being the one claude says it uses.
#include "e2e/claude_world.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

namespace json = boost::json;
using namespace sluice::test;
using namespace std::chrono_literals;

std::vector<std::string> serve(const TempDir& dir, const std::string& claude) {
    return {"serve", "--listen", "127.0.0.1:0", "--data", dir.file("data"), "--claude-bin", claude};
}

json::value seat_of(const SluiceProcess& hub, const std::string& seat) {
    return http("GET", hub.base() + "/v1/seats/" + seat).json;
}

// Sends `text`, waits for its turn to end (a subscriber sees the `turn` event) and returns the
// text of the turn's `result` row ("" when there is none or the turn did not end).
std::string run_turn(const SluiceProcess& hub, const std::string& seat, const std::string& text) {
    std::string result;
    for (const auto& row : turn_frames(hub, seat, text)) {
        if (row.at("type") == "result") {
            result = std::string(row.at("result").as_string()); // the newest: this turn's
        }
    }
    return result;
}

Reply patch(const SluiceProcess& hub, const std::string& seat, const std::string& body) {
    return http("PATCH", hub.base() + "/v1/seats/" + seat, body);
}

TEST(ClaudeSeatControls, PermissionModeAndModelReachTheRunningAgentAndLaterProcesses) {
    TempDir dir;
    const auto claude = fake_claude(dir);
    std::string seat;
    {
        SluiceProcess hub(serve(dir, claude));
        seat = new_seat(hub, {.name = "c", .agent = "claude", .token = {}});
        ASSERT_FALSE(seat.empty());
        ASSERT_EQ(run_turn(hub, seat, "hello"), "you said: hello");

        auto r = patch(hub, seat, R"({"permission_mode":"acceptEdits","model":"fake-2"})");
        ASSERT_EQ(r.status, 200U) << r.body;
        EXPECT_EQ(r.json.at("permission_mode"), "acceptEdits");
        EXPECT_EQ(r.json.at("model"), "fake-2");
        // The running process was told, and its environment asks for session state rows.
        EXPECT_EQ(
            run_turn(hub, seat, "settings?"),
            "got [set_permission_mode=acceptEdits set_model=fake-2] flags mode=- model=- "
            "state_events=1");

        // Refusals name their reason and change nothing.
        r = patch(hub, seat, R"({"permission_mode":"yolo"})");
        EXPECT_EQ(r.status, 400U);
        EXPECT_NE(r.body.find("must be one of default, acceptEdits"), std::string::npos) << r.body;
        r = patch(hub, seat, R"({"name":"","model":"other"})");
        EXPECT_EQ(r.status, 400U) << r.body;
        EXPECT_EQ(seat_of(hub, seat).at("model"), "fake-2") << "a refused request changes nothing";
        r = patch(hub, seat, R"({"colour":"blue"})");
        EXPECT_EQ(r.status, 400U);
        EXPECT_NE(r.body.find("'colour' cannot be changed"), std::string::npos) << r.body;
        EXPECT_EQ(patch(hub, seat, "{}").status, 400U);
        EXPECT_EQ(patch(hub, seat, R"({"model":7})").status, 400U);
        const auto builtin = new_seat(hub);
        r = patch(hub, builtin, R"({"model":"x"})");
        EXPECT_EQ(r.status, 409U) << r.body;
        EXPECT_NE(r.body.find(R"(agents \"claude\" and \"codex\" only)"), std::string::npos)
            << r.body;
    }
    // A restarted hub starts claude with the settings on its command line.
    SluiceProcess hub(serve(dir, claude));
    EXPECT_EQ(seat_of(hub, seat).at("permission_mode"), "acceptEdits");
    EXPECT_EQ(
        run_turn(hub, seat, "settings?"),
        "got [] flags mode=acceptEdits model=fake-2 state_events=1");
    // "default" returns to Claude Code's own default: told now, off the command line later.
    auto r = patch(hub, seat, R"({"model":"default","name":"renamed"})");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_FALSE(r.json.as_object().contains("model")) << r.body;
    EXPECT_EQ(r.json.at("name"), "renamed");
    EXPECT_EQ(
        run_turn(hub, seat, "settings?"),
        "got [set_model=None] flags mode=acceptEdits model=fake-2 state_events=1");
}

TEST(ClaudeSeatControls, RequiresActionIsWaitingAndUnknownRowTypesAreKept) {
    TempDir dir;
    SluiceProcess hub(serve(dir, fake_claude(dir)));
    const auto seat = new_seat(hub, {.name = "c", .agent = "claude", .token = {}});
    ASSERT_FALSE(seat.empty());
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events");
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }));
    const auto turn = send(hub, seat, "needs you");
    bool waited = false;
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!waited && std::chrono::steady_clock::now() < end) {
        waited = seat_of(hub, seat).at("state") == "waiting";
        std::this_thread::sleep_for(30ms);
    }
    EXPECT_TRUE(waited) << "requires_action makes the seat waiting";
    ASSERT_TRUE(sub.wait_for([turn](const auto& ev) { return has_turn_state(ev, turn, "ended"); }));
    EXPECT_EQ(seat_of(hub, seat).at("state"), "idle") << "waiting ends with the turn";

    ASSERT_EQ(run_turn(hub, seat, "unknown row"), "you said: unknown row");
    // Kept in the transcript: the history a new viewer reads has it.
    const auto page = http("GET", hub.base() + "/v1/seats/" + seat + "/history?turns=20").json;
    bool kept = false;
    for (const auto& t : page.at("turns").as_array()) {
        for (const auto& f : t.at("frames").as_array()) {
            if (f.at("type") == "system" && f.as_object().contains("subtype")
                && f.at("subtype") == "agent_row") {
                EXPECT_EQ(f.at("row_type"), "rate_limit_event");
                EXPECT_EQ(f.at("row").at("rate_limit_info").at("status"), "allowed");
                kept = true;
            }
        }
    }
    EXPECT_TRUE(kept) << json::serialize(page);
}

TEST(ClaudeSeatControls, AnAgentThatNeverAnswersASettingsChangeDoesNotHoldItsCaller) {
    TempDir dir;
    SluiceProcess hub(serve(dir, fake_claude(dir, "--ignore-settings")));
    const auto seat = new_seat(hub, {.name = "c", .agent = "claude", .token = {}});
    ASSERT_FALSE(seat.empty());
    ASSERT_EQ(run_turn(hub, seat, "hello"), "you said: hello"); // its process is running
    const auto t0 = std::chrono::steady_clock::now();
    auto r = patch(hub, seat, R"({"model":"fake-2"})");
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(r.status, 409U) << r.body;
    EXPECT_NE(r.body.find("did not answer within 10 s"), std::string::npos) << r.body;
    EXPECT_GE(took, 9s);
    EXPECT_LT(took, 30s);
    EXPECT_FALSE(seat_of(hub, seat).as_object().contains("model")) << "nothing was changed";
    EXPECT_EQ(run_turn(hub, seat, "again"), "you said: again"); // the seat still works
}

// The model a claude seat shows is the one the real Claude Code says it uses: the pinned 2.1.x
// remaps the retired `claude-opus-4-1` (at start from --model, and at set_model), and the seat,
// the PATCH answer and the Messages requests agree on what runs; a name it keeps is shown as
// asked. (The README's PATCH example uses such a kept name.)
TEST(ClaudeSeatControls, TheModelShownIsTheOneTheRealClaudeSaysItUses) {
    namespace ce = sluice::test::claude_e2e;
    using ce::CLAUDE;
    SLUICE_NEED_CLAUDE();
    ce::ClaudeWorld w;
    SluiceProcess hub(ce::serve_args(w.data, w.claude, w.root.string()));
    const auto text_of = [](const json::value& v) {
        return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
    };
    // The streamed Messages requests' model (title and probe calls aside): what runs.
    const auto asked_model = [&w] {
        std::string model;
        for (const auto& body : w.fake.requests()) {
            const auto* st = body.as_object().if_contains("stream");
            if (st != nullptr && st->is_bool() && st->get_bool()) {
                model = std::string(body.at("model").as_string());
            }
        }
        return model;
    };
    auto r = http(
        "POST",
        hub.base() + "/v1/seats",
        json::serialize(json::object{
            {"agent", "claude"}, {"cwd", w.cwd.string()}, {"model", "claude-opus-4-1"}}));
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events");
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }));
    auto turn = send(hub, seat, "hello one");
    ASSERT_TRUE(sub.wait_for(ce::ended(turn), 60s));
    const auto inits = ce::system_rows(sub.events(), "init");
    ASSERT_FALSE(inits.empty());
    const auto runs = text_of(inits.back().at("model"));
    EXPECT_NE(runs, "claude-opus-4-1") << "the pinned Claude Code remaps it";
    EXPECT_EQ(asked_model(), runs);
    EXPECT_EQ(text_of(seat_of(hub, seat).at("model")), runs)
        << "the seat shows what claude said at start";

    r = patch(hub, seat, R"({"model":"claude-sonnet-4-5"})");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(text_of(r.json.at("model")), "claude-sonnet-4-5") << "a name it keeps, as asked";
    turn = send(hub, seat, "hello two");
    ASSERT_TRUE(sub.wait_for(ce::ended(turn), 60s));
    EXPECT_EQ(asked_model(), "claude-sonnet-4-5");

    // The running claude asked for the retired name: the answer names what it will use.
    r = patch(hub, seat, R"({"model":"claude-opus-4-1"})");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(text_of(r.json.at("model")), runs) << r.body;
    EXPECT_EQ(text_of(seat_of(hub, seat).at("model")), runs);
    turn = send(hub, seat, "hello three");
    ASSERT_TRUE(sub.wait_for(ce::ended(turn), 60s));
    EXPECT_EQ(asked_model(), runs);
    EXPECT_EQ(text_of(ce::system_rows(sub.events(), "init").back().at("model")), runs);
}

} // namespace
