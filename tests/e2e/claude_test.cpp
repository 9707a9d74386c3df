// End-to-end tests of the claude agent kind: the real Claude Code CLI (tools/claude-code, from
// scripts/install-deps) driven by the real `sluice serve`, against tests/support/fake_anthropic.py.

#include "e2e/claude_world.hpp"

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_e2e;
using sluice::test::slurp;

TEST(ClaudeSeat, RefusesACwdOutsideTheWorkspaceRoot) {
    SLUICE_NEED_CLAUDE();
    TempDir dir;
    FakeAnthropic fake(dir, script_for(dir.path()));
    const auto root = dir.file("root");
    fs::create_directories(root);
    SluiceProcess hub(serve_args(dir, claude_wrapper(dir, fake), root));
    auto r = http("POST", hub.base() + "/v1/seats", R"({"agent":"claude","cwd":"/"})");
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_NE(r.body.find("workspace root"), std::string::npos) << r.body;
    r = http("POST", hub.base() + "/v1/seats", R"({"agent":"claude","cwd":"../.."})");
    EXPECT_EQ(r.status, 400U) << r.body;
    r = http("POST", hub.base() + "/v1/seats", R"({"agent":"claude","permission_mode":"yolo"})");
    EXPECT_EQ(r.status, 400U) << r.body;
    r = http("POST", hub.base() + "/v1/seats", R"({"agent":"claude"})");
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    EXPECT_TRUE(fs::is_directory(fs::path(root) / seat)) << "a per-seat folder by default";
}

// Three prompts; a Bash call denied from one client and allowed from another (the CLI) while a
// second viewer and a late joiner see the prompt; an interrupt mid-stream; a hub restart, after
// which claude still knows prompts 1-3.
TEST(ClaudeSeat, RemembersPromptsAndPutsPermissionPromptsOnEveryScreen) {
    SLUICE_NEED_CLAUDE();
    ClaudeWorld w;
    std::string seat;
    {
        SluiceProcess hub(serve_args(w.data, w.claude, w.root));
        auto r = http(
            "POST",
            hub.base() + "/v1/seats",
            json::serialize(json::object{{"agent", "claude"}, {"cwd", w.cwd.string()}}));
        ASSERT_EQ(r.status, 201U) << r.body;
        seat = std::string(r.json.at("seat").as_string());
        const auto events = hub.base() + "/v1/seats/" + seat + "/events";
        SseClient a(events);
        SseClient b(events);

        for (const auto* p : {"first prompt alpha", "second prompt beta", "third prompt gamma"}) {
            const auto t = send(hub, seat, p);
            ASSERT_TRUE(a.wait_for(ended(t), 90s)) << "turn " << t;
        }
        const auto said = assistant_text(a.events());
        EXPECT_NE(said.find("echo: second prompt beta"), std::string::npos) << said;
        const auto meta =
            json::parse(slurp(fs::path(w.data.path()) / "seats" / seat / "meta.json"));
        ASSERT_TRUE(meta.as_object().contains("session_id")) << meta;
        const std::string session(meta.at("session_id").as_string());
        EXPECT_EQ(system_rows(a.events(), "init").back().at("session_id").as_string(), session);

        // Denied from one client: the file is not made, and claude is told.
        auto t = send(hub, seat, "make file please");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return !system_rows(ev, "permission_request").empty(); }, 90s));
        const auto ask = system_rows(b.events(), "permission_request").front();
        const std::string id(ask.at("request_id").as_string());
        EXPECT_EQ(ask.at("tool_name"), "Bash");
        EXPECT_NE(json::serialize(ask.at("input")).find("made.txt"), std::string::npos);
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + seat).json.at("state"), "waiting");
        {
            SseClient late(events); // a viewer who joins while the prompt is pending
            ASSERT_TRUE(late.wait_for(
                [](const auto& ev) { return !ev.empty() && ev.front().type == "connected"; }));
            const auto c = json::parse(late.events().front().data);
            ASSERT_TRUE(c.as_object().contains("permissions")) << c;
            EXPECT_EQ(c.at("permissions").at(0).at("request_id").as_string(), id);
        }
        const auto answer_url = hub.base() + "/v1/seats/" + seat + "/permissions/" + id;
        r = http("POST", answer_url, R"({"behavior":"deny","message":"not today","by":"alice"})");
        EXPECT_EQ(r.status, 200U) << r.body;
        r = http("POST", answer_url, R"({"behavior":"allow","by":"bob"})");
        EXPECT_EQ(r.status, 409U) << "the first answer won: " << r.body;
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        for (auto* viewer : {&a, &b}) {
            const auto done = system_rows(viewer->events(), "permission_resolved");
            ASSERT_EQ(done.size(), 1U);
            EXPECT_EQ(done.front().at("behavior"), "deny");
            EXPECT_EQ(done.front().at("by"), "alice");
        }
        EXPECT_FALSE(fs::exists(w.cwd / "made.txt"));
        EXPECT_NE(json::serialize(w.fake.requests().back()).find("not today"), std::string::npos)
            << "claude was told why";

        // Allowed from another client (the CLI) in a later turn: the file is made.
        t = send(hub, seat, "make file again");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return system_rows(ev, "permission_request").size() == 2; }, 90s));
        const std::string cmd = std::string(SLUICE_BINARY) + " approve --hub " + hub.base() + " "
                                + seat + " >" + w.dir.file("approve.out") + " 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(w.dir.file("approve.out"));
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        EXPECT_TRUE(fs::exists(w.cwd / "made.txt"));
        EXPECT_EQ(system_rows(b.events(), "permission_resolved").back().at("behavior"), "allow");
        EXPECT_EQ(system_rows(b.events(), "permission_resolved").back().at("by"), "cli");

        // Interrupt mid-stream; the same seat goes on.
        t = send(hub, seat, "slow story");
        ASSERT_TRUE(a.wait_for(
            [](const auto& ev) {
                return std::any_of(ev.begin(), ev.end(), [](const auto& e) {
                    return e.type == "preview" && e.data.find("\"text\"") != std::string::npos;
                });
            },
            90s));
        r = http("POST", hub.base() + "/v1/seats/" + seat + "/cancel");
        EXPECT_EQ(r.status, 200U);
        ASSERT_TRUE(a.wait_for(ended(t, "cancelled"), 30s));
        t = send(hub, seat, "after the interrupt");
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        EXPECT_NE(assistant_text(a.events()).find("echo: after the interrupt"), std::string::npos);
    }
    // A new hub: a new claude, which resumes the session.
    SluiceProcess hub(serve_args(w.data, w.claude, w.root));
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    const auto t = send(hub, seat, "fourth prompt delta");
    ASSERT_TRUE(a.wait_for(ended(t), 90s));
    const auto last = json::serialize(w.fake.requests().back());
    for (const auto* p :
         {"first prompt alpha",
          "second prompt beta",
          "third prompt gamma",
          "fourth prompt delta"}) {
        EXPECT_NE(last.find(p), std::string::npos) << p << " is not in " << last.substr(0, 2000);
    }
}

} // namespace
