// End-to-end tests of the codex agent kind: the real Codex CLI (tools/codex, `codex app-server`,
// from scripts/install-deps) driven by the real `sluice serve`, against
// tests/support/fake_responses.py as its model provider.

#include "e2e/codex_world.hpp"

namespace {

using namespace sluice::test;
using namespace sluice::test::codex_e2e;
using sluice::test::slurp;

std::string make_seat(const SluiceProcess& hub, const json::object& body) {
    auto r = http("POST", hub.base() + "/v1/seats", json::serialize(body));
    EXPECT_EQ(r.status, 201U) << r.body;
    return r.status == 201U ? std::string(r.json.at("seat").as_string()) : std::string();
}

TEST(CodexSeat, IsListedAndRefusesWhatCodexWouldRefuse) {
    SLUICE_NEED_CODEX();
    CodexWorld w;
    SluiceProcess hub(w.serve_args());
    auto r = http("GET", hub.base() + "/v1/agents");
    ASSERT_EQ(r.status, 200U) << r.body;
    bool listed = false;
    for (const auto& k : r.json.at("agents").as_array()) {
        if (k.at("kind") == "codex") {
            listed = true;
            EXPECT_EQ(k.at("available"), true) << k;
            EXPECT_EQ(k.at("detail").as_string(), w.codex);
        }
    }
    EXPECT_TRUE(listed) << r.body;
    EXPECT_NE(
        json::serialize(r.json.at("approval_policies")).find("on-request"), std::string::npos);

    r = http("POST", hub.base() + "/v1/seats", R"({"agent":"codex","permission_mode":"yolo"})");
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_NE(r.body.find("approval policy"), std::string::npos) << r.body;
    r = http("POST", hub.base() + "/v1/seats", R"({"agent":"codex","cwd":"/"})");
    EXPECT_EQ(r.status, 400U) << r.body;
    const auto seat = make_seat(hub, {{"agent", "codex"}, {"permission_mode", "on-request"}});
    ASSERT_FALSE(seat.empty());
    const auto url = hub.base() + "/v1/seats/" + seat;
    r = http("PATCH", url, R"({"permission_mode":"acceptEdits"})");
    EXPECT_EQ(r.status, 400U) << "a Claude Code mode is no Codex policy: " << r.body;
    r = http("PATCH", url, R"({"permission_mode":"never","model":"gpt-test-model"})");
    EXPECT_EQ(r.status, 200U) << r.body;
    r = http("GET", url);
    EXPECT_EQ(r.json.at("permission_mode"), "never") << r.body;
    EXPECT_EQ(r.json.at("model"), "gpt-test-model") << r.body;

    // The next turn carries the model to Codex, which asks the provider for it.
    SseClient a(url + "/events");
    const auto t = send(hub, seat, "which model");
    ASSERT_TRUE(a.wait_for(ended(t), 90s)) << "turn " << t;
    ASSERT_FALSE(w.fake.requests().empty());
    EXPECT_EQ(w.fake.requests().back().at("model"), "gpt-test-model");

    // Without a codex the kind is unavailable, and says why.
    SluiceProcess bare(
        {"serve",
         "--listen",
         "127.0.0.1:0",
         "--data",
         w.dir.file("bare-data"),
         "--codex-bin",
         w.dir.file("no-such-codex")});
    r = http("POST", bare.base() + "/v1/seats", R"({"agent":"codex"})");
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_NE(r.body.find("--codex-bin"), std::string::npos) << r.body;
}

// Prompts answered as frames (text, thinking, commands with their output); a command approval
// denied from one client and allowed from another (the CLI), seen by every viewer; an interrupt
// mid-answer; then a hub restart, after which Codex resumes the same thread.
TEST(CodexSeat, AnswersAsksInterruptsAndResumesItsThreadAfterARestart) {
    SLUICE_NEED_CODEX();
    CodexWorld w;
    std::string seat;
    std::string thread;
    {
        SluiceProcess hub(w.serve_args());
        seat = make_seat(hub, {{"agent", "codex"}, {"cwd", w.cwd.string()}});
        ASSERT_FALSE(seat.empty());
        const auto events = hub.base() + "/v1/seats/" + seat + "/events";
        SseClient a(events);
        SseClient b(events);

        auto t = send(hub, seat, "first prompt: remember the word pelican");
        ASSERT_TRUE(a.wait_for(ended(t), 90s)) << "turn " << t;
        EXPECT_NE(
            claude_e2e::assistant_text(a.events()).find("echo: first prompt: remember"),
            std::string::npos)
            << claude_e2e::assistant_text(a.events());
        EXPECT_TRUE(text_preview_since(a.events())) << "the answer's deltas are previews";
        const auto meta =
            json::parse(slurp(fs::path(w.data.path()) / "seats" / seat / "meta.json"));
        ASSERT_TRUE(meta.as_object().contains("session_id")) << meta;
        thread = std::string(meta.at("session_id").as_string());
        const auto inits = system_rows(a.events(), "init");
        ASSERT_FALSE(inits.empty());
        EXPECT_EQ(inits.back().at("session_id").as_string(), thread);
        EXPECT_EQ(inits.back().at("agent"), "codex");
        const auto results = [&] {
            std::vector<json::value> out;
            for (const auto& r : rows_of(a.events())) {
                if (r.at("type") == "result") {
                    out.push_back(r);
                }
            }
            return out;
        };
        ASSERT_EQ(results().size(), 1U);
        EXPECT_EQ(results().back().at("is_error"), false);
        EXPECT_GT(results().back().at("usage").at("output_tokens").as_int64(), 0)
            << results().back();

        t = send(hub, seat, "think about birds");
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        ASSERT_FALSE(blocks_of(a.events(), "thinking").empty()) << "reasoning is a thinking row";

        // Denied from one client: the command does not run, and Codex is told.
        t = send(hub, seat, "run:echo hi-from-codex > made.txt; cat made.txt");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return !system_rows(ev, "permission_request").empty(); }, 90s));
        const auto ask = system_rows(b.events(), "permission_request").front();
        const std::string id(ask.at("request_id").as_string());
        EXPECT_EQ(ask.at("tool_name"), "Bash");
        EXPECT_NE(json::serialize(ask.at("input")).find("made.txt"), std::string::npos) << ask;
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + seat).json.at("state"), "waiting");
        const auto answer_url = hub.base() + "/v1/seats/" + seat + "/permissions/" + id;
        auto r = http("POST", answer_url, R"({"behavior":"deny","by":"alice"})");
        EXPECT_EQ(r.status, 200U) << r.body;
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        EXPECT_FALSE(fs::exists(w.cwd / "made.txt"));
        for (auto* viewer : {&a, &b}) {
            const auto done = system_rows(viewer->events(), "permission_resolved");
            ASSERT_EQ(done.size(), 1U);
            EXPECT_EQ(done.front().at("behavior"), "deny");
        }
        EXPECT_NE(
            json::serialize(w.fake.requests().back()).find("rejected by user"), std::string::npos)
            << "codex told the model";
        auto results_of = blocks_of(a.events(), "tool_result");
        ASSERT_FALSE(results_of.empty());
        EXPECT_EQ(results_of.back().at("is_error"), true) << results_of.back();

        // Allowed from the CLI: the command runs, its output is the tool's result.
        t = send(hub, seat, "run:echo hi-from-codex > made.txt; cat made.txt");
        ASSERT_TRUE(b.wait_for(
            [](const auto& ev) { return system_rows(ev, "permission_request").size() == 2; }, 90s));
        const std::string cmd = std::string(SLUICE_BINARY) + " approve --hub " + hub.base() + " "
                                + seat + " >" + w.dir.file("approve.out") + " 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(w.dir.file("approve.out"));
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        EXPECT_TRUE(fs::exists(w.cwd / "made.txt"));
        results_of = blocks_of(a.events(), "tool_result");
        EXPECT_NE(json::serialize(results_of.back()).find("hi-from-codex"), std::string::npos)
            << results_of.back();
        const auto calls = blocks_of(a.events(), "tool_use");
        ASSERT_FALSE(calls.empty());
        EXPECT_EQ(calls.back().at("name"), "Bash");
        EXPECT_EQ(calls.back().at("id"), results_of.back().at("tool_use_id"));

        // Interrupted mid-answer; the same seat goes on.
        t = send(hub, seat, "please be slow");
        ASSERT_TRUE(a.wait_for(text_preview_after(a.events().size()), 90s));
        r = http("POST", hub.base() + "/v1/seats/" + seat + "/cancel");
        EXPECT_EQ(r.status, 200U);
        ASSERT_TRUE(a.wait_for(ended(t, "cancelled"), 30s));
        t = send(hub, seat, "after the interrupt");
        ASSERT_TRUE(a.wait_for(ended(t), 90s));
        EXPECT_NE(
            claude_e2e::assistant_text(a.events()).find("echo: after the interrupt"),
            std::string::npos);
    }
    // A new hub: a new codex, which resumes the thread (the fake sees the first prompt again).
    SluiceProcess hub(w.serve_args());
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    const auto t = send(hub, seat, "second life: which word?");
    ASSERT_TRUE(a.wait_for(ended(t), 90s));
    EXPECT_NE(
        claude_e2e::assistant_text(a.events())
            .find("first: first prompt: remember the word pelican"),
        std::string::npos)
        << claude_e2e::assistant_text(a.events());
    const auto inits = system_rows(a.events(), "init");
    ASSERT_FALSE(inits.empty());
    EXPECT_EQ(inits.back().at("session_id").as_string(), thread);
    EXPECT_EQ(inits.back().at("resumed"), true);
}

// A line that is not JSON, and codex killed mid-turn: each fails its turn with the reason, and
// the next prompt starts codex again on the same thread.
TEST(CodexSeat, AGarbageLineOrACrashFailsTheTurnAndTheSeatGoesOn) {
    SLUICE_NEED_CODEX();
    CodexWorld w;
    SluiceProcess hub(w.serve_args());
    const auto seat = make_seat(hub, {{"agent", "codex"}});
    ASSERT_FALSE(seat.empty());
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");

    std::ofstream(w.garbage_file) << "once\n";
    auto t = send(hub, seat, "hello before the bad line");
    const auto turn_events = [&] {
        std::string out;
        for (const auto& e : a.events()) {
            if (e.type == "turn") {
                out += e.data + "\n";
            }
        }
        return out;
    };
    ASSERT_TRUE(a.wait_for(ended(t, "failed"), 90s)) << "turn " << t << ": " << turn_events();
    const auto state = [&](std::uint64_t turn) {
        for (const auto& e : a.events()) {
            if (e.type != "turn") {
                continue;
            }
            const auto v = json::parse(e.data);
            if (v.at("turn").to_number<std::uint64_t>() == turn && v.at("state") == "failed") {
                return e.data;
            }
        }
        return std::string();
    };
    EXPECT_NE(state(t).find("not a JSON-RPC message"), std::string::npos) << state(t);

    t = send(hub, seat, "first after the bad line: remember the word heron");
    ASSERT_TRUE(a.wait_for(ended(t), 90s)) << "turn " << t << ": " << turn_events();

    t = send(hub, seat, "please be slow");
    ASSERT_TRUE(a.wait_for(text_preview_after(a.events().size()), 90s));
    const auto pid = w.pid();
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
    ASSERT_TRUE(a.wait_for(ended(t, "failed"), 30s));
    EXPECT_NE(state(t).find("codex exited"), std::string::npos) << state(t);
    EXPECT_NE(state(t).find("signal 9"), std::string::npos) << state(t);

    t = send(hub, seat, "after the crash");
    ASSERT_TRUE(a.wait_for(ended(t), 90s));
    EXPECT_NE(
        claude_e2e::assistant_text(a.events()).find("first: first after the bad line"),
        std::string::npos)
        << "the thread was resumed: " << claude_e2e::assistant_text(a.events());
}

} // namespace
