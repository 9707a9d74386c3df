// End-to-end tests of the acp agent kind: a real ACP agent, Qwen Code 0.24.4 (tools/qwen-code,
// `qwen --acp`, from scripts/install-deps), driven by the real `sluice serve`, against
// tests/support/fake_responses.py as its model (OpenAI Responses API on loopback).

#include "e2e/codex_world.hpp"

namespace {

using namespace sluice::test;
using namespace sluice::test::codex_e2e;
using sluice::test::slurp;

const fs::path QWEN = SOURCE_ROOT / "tools" / "qwen-code" / "node_modules" / ".bin" / "qwen";

#define SLUICE_NEED_QWEN()                                                                         \
    do {                                                                                           \
        if (!std::filesystem::exists(QWEN)) {                                                      \
            GTEST_SKIP() << "Qwen Code is not installed at " << QWEN.string()                      \
                         << " (scripts/install-deps installs it)";                                 \
        }                                                                                          \
    } while (false)

// An acp seat's world: a workspace root with `work` in it, the fake Responses API, a scratch
// HOME whose ~/.qwen/settings.json turns off auto-update, usage statistics and telemetry and
// asks before shell commands and edits, and a wrapper running the pinned Qwen Code against the
// fake (its pid, which it execs, in `pid_file`). The hub allows `cmd()`.
struct AcpWorld {
    TempDir dir;
    fs::path root = made(dir.file("root"));
    fs::path cwd = made(root / "work");
    fs::path home = made(dir.file("home"));
    FakeResponses fake{dir};
    std::string pid_file = dir.file("qwen.pid");
    std::string wrapper = write_wrapper();
    TempDir data;

    static fs::path made(fs::path p) {
        fs::create_directories(p);
        return p;
    }

    [[nodiscard]] std::string cmd() const { return wrapper + " --acp"; }

    [[nodiscard]] std::vector<std::string> serve_args() const {
        return {
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data",
            data.path(),
            "--workspace-root",
            root.string(),
            "--acp-agent",
            cmd(),
            "--acp-agent",
            "opencode acp"};
    }

    [[nodiscard]] long pid() const {
        const auto s = slurp(pid_file);
        return s.empty() ? 0 : std::stol(s);
    }

private:
    std::string write_wrapper() {
        fs::create_directories(home / ".qwen");
        std::ofstream(home / ".qwen" / "settings.json")
            << R"({"general":{"disableAutoUpdate":true,"disableUpdateNag":true},)"
            << R"("privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},)"
            << R"("tools":{"approvalMode":"default"}})";
        const auto path = dir.file("qwen-acp.sh");
        std::ofstream(path) << "#!/bin/sh\n"
                            << "export HOME='" << home.string() << "' NO_COLOR=1\n"
                            << "echo $$ > '" << pid_file << "'\n"
                            << "exec '" << QWEN.string() << "' \"$@\" --auth-type openai-responses"
                            << " --openai-base-url " << fake.url() << " --openai-api-key sk-fake\n";
        fs::permissions(path, fs::perms::owner_all);
        return path;
    }
};

std::string make_seat(const SluiceProcess& hub, const json::object& body) {
    auto r = http("POST", hub.base() + "/v1/seats", json::serialize(body));
    EXPECT_EQ(r.status, 201U) << r.body;
    return r.status == 201U ? std::string(r.json.at("seat").as_string()) : std::string();
}

// The `turn` event that ended `turn` (its data: state and reason), "" while it runs.
std::string turn_state(const std::vector<sluice::sse::Event>& events, std::uint64_t turn) {
    for (const auto& e : events) {
        if (e.type != "turn") {
            continue;
        }
        const auto v = json::parse(e.data);
        const auto& state = v.at("state");
        if (v.at("turn").to_number<std::uint64_t>() == turn
            && (state == "ended" || state == "failed" || state == "cancelled")) {
            return e.data;
        }
    }
    return {};
}

TEST(AcpSeat, OnlyACommandLineTheHubAllowsRuns) {
    AcpWorld w;
    SluiceProcess hub(w.serve_args());
    auto r = http("GET", hub.base() + "/v1/agents");
    ASSERT_EQ(r.status, 200U) << r.body;
    const json::object* acp = nullptr;
    for (const auto& k : r.json.at("agents").as_array()) {
        if (k.at("kind") == "acp") {
            acp = &k.as_object();
        }
    }
    ASSERT_NE(acp, nullptr) << r.body;
    EXPECT_EQ(acp->at("available"), true) << *acp;
    // The line whose executable is here is offered; the one that is not says why.
    EXPECT_EQ(json::serialize(acp->at("commands")), json::serialize(json::array{w.cmd()})) << *acp;
    EXPECT_NE(json::serialize(*acp).find("no executable 'opencode'"), std::string::npos) << *acp;

    const auto refused = [&](const std::string& body, std::string_view why) {
        const auto res = http("POST", hub.base() + "/v1/seats", body);
        EXPECT_EQ(res.status, 400U) << body << " -> " << res.body;
        EXPECT_NE(res.body.find(why), std::string::npos) << body << " -> " << res.body;
    };
    refused(R"({"agent":"acp"})", "needs field 'cmd'");
    refused(
        json::serialize(json::object{{"agent", "acp"}, {"cmd", w.cmd() + " "}}),
        "must be one of the command lines this hub allows");
    refused(R"({"agent":"acp","cmd":"sh -c 'rm -rf /'"})", "must be one of the command lines");
    refused(
        json::serialize(json::object{{"agent", "acp"}, {"cmd", w.cmd()}, {"model", "m"}}),
        "are not for agent");
    refused(
        json::serialize(
            json::object{{"agent", "acp"}, {"cmd", w.cmd()}, {"permission_mode", "plan"}}),
        "field 'permission_mode' is for agents");
    refused(R"({"agent":"builtin","cmd":"x"})", "field 'cmd' is for agent");
    refused(
        json::serialize(json::object{{"agent", "acp"}, {"cmd", w.cmd()}, {"cwd", "/"}}),
        "must lie inside the workspace root");

    const auto seat = make_seat(hub, {{"agent", "acp"}, {"cmd", w.cmd()}});
    ASSERT_FALSE(seat.empty());
    r = http("GET", hub.base() + "/v1/seats/" + seat);
    EXPECT_EQ(r.json.at("agent"), "acp") << r.body;
    EXPECT_EQ(r.json.at("cmd").as_string(), w.cmd()) << r.body;
    r = http("PATCH", hub.base() + "/v1/seats/" + seat, R"({"model":"other"})");
    EXPECT_EQ(r.status, 409U) << r.body;

    // A hub that allows none says how to allow one.
    SluiceProcess bare({"serve", "--listen", "127.0.0.1:0", "--data", w.dir.file("bare")});
    r = http(
        "POST",
        bare.base() + "/v1/seats",
        json::serialize(json::object{{"agent", "acp"}, {"cmd", w.cmd()}}));
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_NE(r.body.find("serve --acp-agent"), std::string::npos) << r.body;

    // The allowed lines may come from the config file (key acp_agent, a list).
    const auto conf = w.dir.file("config.toml");
    std::ofstream(conf) << "acp_agent = [" << json::serialize(json::value(w.cmd())) << "]\n";
    SluiceProcess configured(
        {"serve", "--listen", "127.0.0.1:0", "--data", w.dir.file("conf-data"), "--config", conf});
    r = http("GET", configured.base() + "/v1/agents");
    EXPECT_NE(r.body.find(json::serialize(json::array{w.cmd()})), std::string::npos) << r.body;
}

// A command line whose program is a relative path: found where the hub was started, run in the
// seat's folder (tests/support/fake_acp.py behind a wrapper, so no real agent is needed).
TEST(AcpSeat, AProgramNamedByARelativePathIsTheHubsAndRunsInTheSeatsFolder) {
    AcpWorld w;
    fs::create_directories(fs::path(w.dir.path()) / "bin");
    const auto log = w.dir.file("fake-acp.jsonl");
    const auto wrapper = fs::path(w.dir.path()) / "bin" / "fake-acp";
    std::ofstream(wrapper) << "#!/bin/sh\nexport FAKE_ACP_LOG='" << log << "'\nexec python3 '"
                           << (SUPPORT / "fake_acp.py").string() << "' \"$@\"\n";
    fs::permissions(wrapper, fs::perms::owner_all);
    SluiceProcess hub(
        {"serve",
         "--listen",
         "127.0.0.1:0",
         "--data",
         w.data.path(),
         "--workspace-root",
         w.root.string(),
         "--acp-agent",
         "./bin/fake-acp --acp"},
        true,
        HubAuth::no_token,
        w.dir.path());
    const auto seat = make_seat(
        hub, {{"agent", "acp"}, {"cmd", "./bin/fake-acp --acp"}, {"cwd", w.cwd.string()}});
    ASSERT_FALSE(seat.empty());
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    const auto t = send(hub, seat, "hello");
    ASSERT_TRUE(a.wait_for(ended(t), 60s)) << turn_state(a.events(), t);
    EXPECT_NE(
        claude_e2e::assistant_text(a.events()).find("echo: hello (prompts: 1)"), std::string::npos)
        << claude_e2e::assistant_text(a.events());
    EXPECT_NE(
        slurp(log).find(json::serialize(json::value(fs::canonical(w.cwd).string()))),
        std::string::npos)
        << "its session is in the seat's folder: " << slurp(log);
}

// The real Qwen Code through a seat: a prompt answered as frames; a shell command's permission
// denied from one client and allowed from the CLI, seen by every viewer; a cancel mid-answer;
// `kill -9` mid-turn; then a hub restart, after which the agent loads the same session.
TEST(AcpSeat, QwenAnswersAsksCancelsSurvivesACrashAndLoadsItsSessionAfterARestart) {
    SLUICE_NEED_QWEN();
    AcpWorld w;
    std::string seat;
    std::string session;
    {
        SluiceProcess hub(w.serve_args());
        seat = make_seat(hub, {{"agent", "acp"}, {"cmd", w.cmd()}, {"cwd", w.cwd.string()}});
        ASSERT_FALSE(seat.empty());
        const auto events = hub.base() + "/v1/seats/" + seat + "/events";
        SseClient a(events);
        SseClient b(events);

        auto t = send(hub, seat, "first prompt: remember the word pelican");
        ASSERT_TRUE(a.wait_for(ended(t), 120s)) << "turn " << t << " " << turn_state(a.events(), t);
        EXPECT_NE(
            claude_e2e::assistant_text(a.events()).find("echo: first prompt: remember"),
            std::string::npos)
            << claude_e2e::assistant_text(a.events());
        EXPECT_TRUE(text_preview_since(a.events())) << "the answer's chunks are previews";
        const auto inits = system_rows(a.events(), "init");
        ASSERT_FALSE(inits.empty());
        EXPECT_EQ(inits.back().at("agent"), "acp");
        EXPECT_EQ(inits.back().at("agent_name"), "Qwen Code");
        session = std::string(inits.back().at("session_id").as_string());
        const auto meta =
            json::parse(slurp(fs::path(w.data.path()) / "seats" / seat / "meta.json"));
        EXPECT_EQ(meta.at("session_id").as_string(), session) << meta;
        EXPECT_EQ(meta.at("cmd").as_string(), w.cmd()) << meta;

        // Denied from one client: the command does not run.
        t = send(hub, seat, "run:echo hi-from-qwen > made.txt");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return !system_rows(ev, "permission_request").empty(); }, 120s))
            << turn_state(b.events(), t);
        const auto ask = system_rows(b.events(), "permission_request").front();
        EXPECT_EQ(ask.at("tool_name"), "Bash") << ask;
        EXPECT_NE(json::serialize(ask.at("input")).find("made.txt"), std::string::npos) << ask;
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + seat).json.at("state"), "waiting");
        const std::string id(ask.at("request_id").as_string());
        auto r = http(
            "POST",
            hub.base() + "/v1/seats/" + seat + "/permissions/" + id,
            R"({"behavior":"deny","by":"alice"})");
        EXPECT_EQ(r.status, 200U) << r.body;
        ASSERT_TRUE(a.wait_for(ended(t), 120s)) << turn_state(a.events(), t);
        EXPECT_FALSE(fs::exists(w.cwd / "made.txt"));
        for (auto* viewer : {&a, &b}) {
            const auto done = system_rows(viewer->events(), "permission_resolved");
            ASSERT_EQ(done.size(), 1U);
            EXPECT_EQ(done.front().at("behavior"), "deny");
        }

        // Allowed from the CLI: the command runs, and its call and result are frames.
        t = send(hub, seat, "run:echo hi-from-qwen > made.txt");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return system_rows(ev, "permission_request").size() == 2; },
            120s));
        const std::string cmd = std::string(SLUICE_BINARY) + " approve --hub " + hub.base() + " "
                                + seat + " >" + w.dir.file("approve.out") + " 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(w.dir.file("approve.out"));
        ASSERT_TRUE(a.wait_for(ended(t), 120s)) << turn_state(a.events(), t);
        EXPECT_EQ(slurp((w.cwd / "made.txt").string()), "hi-from-qwen\n");
        const auto calls = blocks_of(a.events(), "tool_use");
        ASSERT_FALSE(calls.empty());
        EXPECT_EQ(calls.back().at("name"), "Bash");
        EXPECT_NE(json::serialize(calls.back().at("input")).find("made.txt"), std::string::npos);
        const auto results = blocks_of(a.events(), "tool_result");
        ASSERT_FALSE(results.empty());
        EXPECT_EQ(results.back().at("tool_use_id"), calls.back().at("id"));
        EXPECT_EQ(results.back().at("is_error"), false) << results.back();

        // Cancelled mid-answer; the same process goes on.
        t = send(hub, seat, "please be slow");
        ASSERT_TRUE(a.wait_for(text_preview_after(a.events().size()), 120s));
        const auto pid_before = w.pid();
        r = http("POST", hub.base() + "/v1/seats/" + seat + "/cancel");
        EXPECT_EQ(r.status, 200U);
        ASSERT_TRUE(a.wait_for(ended(t, "cancelled"), 30s)) << turn_state(a.events(), t);
        t = send(hub, seat, "after the cancel");
        ASSERT_TRUE(a.wait_for(ended(t), 120s)) << turn_state(a.events(), t);
        EXPECT_NE(
            claude_e2e::assistant_text(a.events()).find("echo: after the cancel"),
            std::string::npos);
        EXPECT_EQ(w.pid(), pid_before) << "a cancel does not cost the process";

        // kill -9 mid-turn: the turn fails with the reason (its children are ended too, so
        // nothing holds the pipe), and the next prompt starts the agent again on the session.
        t = send(hub, seat, "please be slow again");
        ASSERT_TRUE(a.wait_for(text_preview_after(a.events().size()), 120s));
        ASSERT_EQ(::kill(static_cast<pid_t>(w.pid()), SIGKILL), 0);
        ASSERT_TRUE(a.wait_for(ended(t, "failed"), 30s)) << turn_state(a.events(), t);
        EXPECT_NE(turn_state(a.events(), t).find("signal 9"), std::string::npos)
            << turn_state(a.events(), t);
    }
    // A new hub: a new agent, which loads the session (the model sees the first prompt again).
    SluiceProcess hub(w.serve_args());
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    const auto t = send(hub, seat, "second life: which word?");
    ASSERT_TRUE(a.wait_for(ended(t), 120s)) << turn_state(a.events(), t);
    EXPECT_NE(
        claude_e2e::assistant_text(a.events())
            .find("first: first prompt: remember the word pelican"),
        std::string::npos)
        << claude_e2e::assistant_text(a.events());
    const auto inits = system_rows(a.events(), "init");
    ASSERT_FALSE(inits.empty());
    EXPECT_EQ(inits.back().at("session_id").as_string(), session);
    EXPECT_EQ(inits.back().at("resumed"), true);
}

} // namespace
