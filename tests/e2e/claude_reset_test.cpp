// End-to-end tests of the claude agent kind, continued: reset and Claude's own /clear as new
// epochs, settings reaching the real CLI, a builtin seat's reset, `sluice run --agent claude`.

#include "e2e/claude_world.hpp"

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_e2e;
using sluice::test::slurp;

// The streamed Messages requests recorded so far, as JSON text (title and probe calls aside).
std::vector<std::string> turn_requests(const FakeAnthropic& fake) {
    std::vector<std::string> out;
    for (const auto& body : fake.requests()) {
        const auto* st = body.is_object() ? body.as_object().if_contains("stream") : nullptr;
        if (st != nullptr && st->is_bool() && st->get_bool()) {
            out.push_back(json::serialize(body));
        }
    }
    return out;
}

// The `connected` events of `events`, as (id, data).
std::vector<std::pair<std::string, json::value>>
connected_of(const std::vector<sluice::sse::Event>& events) {
    std::vector<std::pair<std::string, json::value>> out;
    for (const auto& e : events) {
        if (e.type == "connected") {
            out.emplace_back(e.id, json::parse(e.data));
        }
    }
    return out;
}

std::string epoch_of(const SluiceProcess& hub, const std::string& seat) {
    return std::string(http("GET", hub.base() + "/v1/seats/" + seat).json.at("epoch").as_string());
}

// The owner's reset with the real claude: the next prompt reaches a claude that does not know
// the earlier ones (no --resume), a viewer is resynced to the new epoch, an old Last-Event-ID
// does not resume, the old transcript is kept, and a hub restart keeps the seat reset.
TEST(ClaudeSeat, ResetStartsANewEpochAndAClaudeThatForgot) {
    SLUICE_NEED_CLAUDE();
    ClaudeWorld w;
    std::string seat, e1, e2, old_session;
    {
        SluiceProcess hub(serve_args(w.data, w.claude, w.root));
        auto r = http(
            "POST",
            hub.base() + "/v1/seats",
            json::serialize(json::object{{"agent", "claude"}, {"cwd", w.cwd.string()}}));
        ASSERT_EQ(r.status, 201U) << r.body;
        seat = std::string(r.json.at("seat").as_string());
        const auto base = hub.base() + "/v1/seats/" + seat;
        SseClient a(base + "/events");
        auto t = send(hub, seat, "first prompt alpha");
        ASSERT_TRUE(a.wait_for(ended(t), 60s));
        e1 = epoch_of(hub, seat);
        const auto meta_dir = fs::path(w.data.path()) / "seats" / seat;
        old_session =
            std::string(json::parse(slurp(meta_dir / "meta.json")).at("session_id").as_string());

        // Refused while a turn runs (cancel first).
        t = send(hub, seat, "slow story");
        ASSERT_TRUE(a.wait_for(
            [](const auto& ev) {
                return std::any_of(ev.begin(), ev.end(), [](const auto& e) {
                    return e.type == "preview" && e.data.find("\"text\"") != std::string::npos;
                });
            },
            60s));
        r = http("POST", base + "/reset", "{}");
        EXPECT_EQ(r.status, 409U) << r.body;
        EXPECT_NE(r.body.find("cancel it first"), std::string::npos) << r.body;
        ASSERT_EQ(http("POST", base + "/cancel").status, 200U);
        ASSERT_TRUE(a.wait_for(ended(t, "cancelled"), 30s));
        EXPECT_EQ(http("POST", base + "/reset", R"({"x":1})").status, 400U);

        // From the CLI.
        const std::string cmd = std::string(SLUICE_BINARY) + " reset --hub " + hub.base() + " "
                                + seat + " >" + w.dir.file("reset.out") + " 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(w.dir.file("reset.out"));
        e2 = epoch_of(hub, seat);
        EXPECT_NE(e2, e1);
        EXPECT_NE(slurp(w.dir.file("reset.out")).find("reset: epoch " + e2), std::string::npos)
            << slurp(w.dir.file("reset.out"));
        // The viewer is resynced: a new `connected` of the new epoch, holding only the reset.
        ASSERT_TRUE(a.wait_for(
            [&](const auto& ev) {
                const auto c = connected_of(ev);
                return c.size() == 2 && c.back().first.starts_with(e2 + ":");
            },
            10s));
        const auto c = connected_of(a.events()).back().second;
        EXPECT_EQ(c.at("epoch").as_string(), e2) << c;
        EXPECT_EQ(json::serialize(c).find("first prompt alpha"), std::string::npos) << c;
        // Its first frame (seq 0 of the new epoch) says what happened.
        ASSERT_TRUE(a.wait_for(
            [](const auto& ev) { return !system_rows(ev, "conversation_reset").empty(); }, 10s));
        const auto marker = system_rows(a.events(), "conversation_reset").front();
        EXPECT_EQ(marker.at("trigger"), "api");
        EXPECT_EQ(marker.at("previous_epoch").as_string(), e1);
        // An old Last-Event-ID gives a fresh start of the new epoch, never a replay.
        SseClient late(base + "/events", e1 + ":2");
        ASSERT_TRUE(late.wait_for([](const auto& ev) { return !ev.empty(); }));
        EXPECT_EQ(late.events().front().type, "connected");
        EXPECT_TRUE(late.events().front().id.starts_with(e2 + ":")) << late.events().front().id;
        // The old transcript is kept, renamed; the new one holds the new epoch's frames.
        const auto archived = meta_dir / ("transcript." + e1 + ".jsonl");
        EXPECT_NE(slurp(archived).find("first prompt alpha"), std::string::npos);
        EXPECT_EQ(
            slurp(meta_dir / "transcript.jsonl").find("first prompt alpha"), std::string::npos);
        EXPECT_FALSE(json::parse(slurp(meta_dir / "meta.json")).as_object().contains("session_id"))
            << "the session is forgotten";

        const auto before = turn_requests(w.fake).size();
        t = send(hub, seat, "second prompt beta");
        ASSERT_TRUE(a.wait_for(ended(t), 60s));
        const auto reqs = turn_requests(w.fake);
        ASSERT_GT(reqs.size(), before);
        EXPECT_NE(reqs.back().find("second prompt beta"), std::string::npos);
        EXPECT_EQ(reqs.back().find("first prompt alpha"), std::string::npos)
            << "claude still knew the earlier prompt: " << reqs.back().substr(0, 2000);
        const auto meta = json::parse(slurp(meta_dir / "meta.json"));
        ASSERT_TRUE(meta.as_object().contains("session_id")) << meta;
        EXPECT_NE(meta.at("session_id").as_string(), old_session) << "a new claude session";
        EXPECT_EQ(meta.at("epoch").as_string(), e2);
    }
    // After a restart the seat is still reset: the new epoch, and claude resumes the new
    // session (prompt 2), not the old one (prompt 1).
    SluiceProcess hub(serve_args(w.data, w.claude, w.root));
    EXPECT_EQ(epoch_of(hub, seat), e2);
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    const auto t = send(hub, seat, "third prompt gamma");
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    const auto last = turn_requests(w.fake).back();
    EXPECT_NE(last.find("second prompt beta"), std::string::npos) << last.substr(0, 2000);
    EXPECT_EQ(last.find("first prompt alpha"), std::string::npos) << last.substr(0, 2000);
    EXPECT_EQ(assistant_text(a.events()).find("echo: first prompt alpha"), std::string::npos);
}

// Claude Code's own `/clear` (a `conversation_reset` row, then a system/init of a new session):
// the seat follows it with a new epoch and records the new session id.
TEST(ClaudeSeat, FollowsClaudesOwnClearWithANewEpoch) {
    SLUICE_NEED_CLAUDE();
    ClaudeWorld w;
    SluiceProcess hub(serve_args(w.data, w.claude, w.root));
    auto r = http(
        "POST",
        hub.base() + "/v1/seats",
        json::serialize(json::object{{"agent", "claude"}, {"cwd", w.cwd.string()}}));
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    const auto meta_dir = fs::path(w.data.path()) / "seats" / seat;
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
    auto t = send(hub, seat, "first prompt alpha");
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    const auto e1 = epoch_of(hub, seat);
    const std::string s1(json::parse(slurp(meta_dir / "meta.json")).at("session_id").as_string());
    // From the CLI, which says so.
    const std::string cmd = std::string(SLUICE_BINARY) + " send --hub " + hub.base() + " " + seat
                            + " /clear >" + w.dir.file("clear.out") + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(w.dir.file("clear.out"));
    EXPECT_NE(slurp(w.dir.file("clear.out")).find("conversation reset"), std::string::npos)
        << slurp(w.dir.file("clear.out"));
    ASSERT_TRUE(a.wait_for(ended(t + 1), 60s));
    const auto e2 = epoch_of(hub, seat);
    EXPECT_NE(e2, e1);
    const auto c = connected_of(a.events());
    ASSERT_EQ(c.size(), 2U);
    EXPECT_TRUE(c.back().first.starts_with(e2 + ":")) << c.back().first;
    const auto resets = system_rows(a.events(), "conversation_reset");
    ASSERT_EQ(resets.size(), 1U);
    EXPECT_EQ(resets.front().at("trigger"), "clear");
    EXPECT_EQ(resets.front().at("previous_epoch").as_string(), e1);
    // The new session's init came after the reset, in the new epoch, and is remembered.
    const auto inits = system_rows(a.events(), "init");
    ASSERT_GE(inits.size(), 2U);
    const std::string s2(inits.back().at("session_id").as_string());
    EXPECT_NE(s2, s1);
    EXPECT_EQ(json::parse(slurp(meta_dir / "meta.json")).at("session_id").as_string(), s2);
    EXPECT_NE(slurp(meta_dir / ("transcript." + e1 + ".jsonl")).find("/clear"), std::string::npos);
    t = send(hub, seat, "after the clear");
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    const auto last = turn_requests(w.fake).back();
    EXPECT_NE(last.find("after the clear"), std::string::npos);
    EXPECT_EQ(last.find("first prompt alpha"), std::string::npos) << last.substr(0, 2000);
}

// A PATCH of model and permission_mode reaches the real claude: its next request names the new
// model; bypassPermissions (which Claude Code refuses for a session not launched for it) is an
// error for the caller and changes nothing; acceptEdits lets a Write through with no prompt.
TEST(ClaudeSeat, SettingsReachTheRealClaudeAndItsRefusalsReachTheCaller) {
    SLUICE_NEED_CLAUDE();
    TempDir dir;
    const fs::path root = dir.file("root");
    const fs::path cwd = root / "work";
    fs::create_directories(cwd);
    const auto made = cwd / "written.txt";
    FakeAnthropic fake(
        dir,
        json::parse(
            R"({"rules":[{"prompt":"write it","reply":[{"tool_use":{"name":"Write","input":)"
            R"({"file_path":")"
            + made.string()
            + R"(","content":"hi\n"}}}]},{"tool_result":"","reply":[{"text":"done."}]}]})"));
    const auto claude = claude_wrapper(dir, fake);
    TempDir data;
    SluiceProcess hub(serve_args(data, claude, root));
    auto r = http(
        "POST",
        hub.base() + "/v1/seats",
        json::serialize(json::object{{"agent", "claude"}, {"cwd", cwd.string()}}));
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    const auto base = hub.base() + "/v1/seats/" + seat;
    SseClient a(base + "/events");
    auto t = send(hub, seat, "hello one");
    ASSERT_TRUE(a.wait_for(ended(t), 60s)); // claude runs from here on

    r = http("PATCH", base, R"({"model":"claude-fake-2"})");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(r.json.at("model"), "claude-fake-2");
    t = send(hub, seat, "hello two");
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    const auto two = json::parse(turn_requests(fake).back());
    EXPECT_EQ(two.at("model"), "claude-fake-2");

    r = http("PATCH", base, R"({"permission_mode":"bypassPermissions"})");
    EXPECT_EQ(r.status, 409U) << r.body;
    EXPECT_NE(r.body.find("dangerously-skip-permissions"), std::string::npos) << r.body;
    EXPECT_FALSE(http("GET", base).json.as_object().contains("permission_mode"));

    // Default mode: a Write asks first (denied here: nothing is written).
    t = send(hub, seat, "write it now");
    ASSERT_TRUE(a.wait_for(
        [](const auto& ev) { return !system_rows(ev, "permission_request").empty(); }, 60s));
    const std::string id(
        system_rows(a.events(), "permission_request").front().at("request_id").as_string());
    ASSERT_EQ(http("POST", base + "/permissions/" + id, R"({"behavior":"deny"})").status, 200U);
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    EXPECT_FALSE(fs::exists(made));

    r = http("PATCH", base, R"({"permission_mode":"acceptEdits"})");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(r.json.at("permission_mode"), "acceptEdits");
    t = send(hub, seat, "write it again");
    ASSERT_TRUE(a.wait_for(ended(t), 60s));
    EXPECT_EQ(system_rows(a.events(), "permission_request").size(), 1U) << "no second prompt";
    EXPECT_TRUE(fs::exists(made)) << "acceptEdits let the Write through";
    EXPECT_EQ(json::parse(turn_requests(fake).back()).at("model"), "claude-fake-2");
}

// A builtin seat's reset empties its provider history too, and survives a hub restart.
TEST(BuiltinSeat, ResetEmptiesItsHistoryAndStaysResetAfterARestart) {
    TempDir dir;
    FakeAnthropic fake(dir, json::parse(R"({"rules":[]})"));
    TempDir data;
    ::setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy", 1); // the hub's builtin provider reads it
    const std::vector<std::string> args{
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        data.path(),
        "--provider",
        "anthropic",
        "--base-url",
        fake.url()};
    std::string seat, e2;
    {
        SluiceProcess hub(args);
        seat = new_seat(hub, {});
        ASSERT_FALSE(seat.empty());
        SseClient a(hub.base() + "/v1/seats/" + seat + "/events");
        auto t = send(hub, seat, "first prompt alpha");
        ASSERT_TRUE(a.wait_for(ended(t), 20s));
        t = send(hub, seat, "second prompt beta");
        ASSERT_TRUE(a.wait_for(ended(t), 20s));
        EXPECT_NE(turn_requests(fake).back().find("first prompt alpha"), std::string::npos);
        const auto e1 = epoch_of(hub, seat);
        auto r = http("POST", hub.base() + "/v1/seats/" + seat + "/reset");
        ASSERT_EQ(r.status, 200U) << r.body;
        e2 = std::string(r.json.at("epoch").as_string());
        EXPECT_NE(e2, e1);
        EXPECT_EQ(r.json.at("previous_epoch").as_string(), e1);
        const auto seat_now = http("GET", hub.base() + "/v1/seats/" + seat).json;
        EXPECT_EQ(seat_now.at("epoch").as_string(), e2);
        EXPECT_EQ(seat_now.at("turns"), 2) << "turn numbers go on";
        EXPECT_LE(seat_now.at("frames").as_int64(), 1) << "at most the reset's own row";
        t = send(hub, seat, "third prompt gamma");
        ASSERT_TRUE(a.wait_for(ended(t), 20s));
        const auto last = turn_requests(fake).back();
        EXPECT_NE(last.find("third prompt gamma"), std::string::npos);
        EXPECT_EQ(last.find("first prompt alpha"), std::string::npos) << last;
        EXPECT_EQ(last.find("second prompt beta"), std::string::npos) << last;
    }
    SluiceProcess hub(args);
    EXPECT_EQ(epoch_of(hub, seat), e2);
    SseClient a(hub.base() + "/v1/seats/" + seat + "/events", "e_old:3");
    ASSERT_TRUE(a.wait_for([](const auto& ev) { return !ev.empty(); }));
    EXPECT_EQ(a.events().front().type, "connected");
    const auto t = send(hub, seat, "fourth prompt delta");
    ASSERT_TRUE(a.wait_for(ended(t), 20s));
    const auto last = turn_requests(fake).back();
    EXPECT_NE(last.find("third prompt gamma"), std::string::npos) << last;
    EXPECT_EQ(last.find("first prompt alpha"), std::string::npos) << last;
    ASSERT_EQ(hub.terminate(), 0);

    // A reset the hub left half-done (the transcript archived, meta.json not yet rewritten) is
    // finished on open: a new epoch, an empty conversation, the archive kept.
    const auto seat_dir = fs::path(data.path()) / "seats" / seat;
    fs::rename(seat_dir / "transcript.jsonl", seat_dir / ("transcript." + e2 + ".jsonl"));
    SluiceProcess again(args);
    const auto now = http("GET", again.base() + "/v1/seats/" + seat).json;
    EXPECT_NE(now.at("epoch").as_string(), e2);
    EXPECT_EQ(now.at("frames"), 0);
    EXPECT_NE(
        slurp(seat_dir / ("transcript." + e2 + ".jsonl")).find("fourth prompt delta"),
        std::string::npos);
}

// The shape of a row, ids, timestamps, durations and costs aside.
std::string shape(const json::object& row) {
    std::string s(row.at("type").as_string());
    if (const auto* st = row.if_contains("subtype"); st != nullptr && st->is_string()) {
        s += "/" + std::string(st->as_string());
    }
    if (const auto* e = row.if_contains("event"); e != nullptr && e->is_object()) {
        const auto& eo = e->as_object();
        s += " " + std::string(eo.at("type").as_string());
        if (const auto* i = eo.if_contains("index")) {
            s += " " + json::serialize(*i);
        }
        if (const auto* d = eo.if_contains("delta"); d != nullptr && d->is_object()) {
            const auto& dobj = d->as_object();
            if (const auto* dt = dobj.if_contains("type")) {
                s += " " + json::serialize(*dt);
            }
            for (const auto* k : {"text", "thinking"}) {
                if (const auto* v = dobj.if_contains(k)) {
                    s += " " + json::serialize(*v);
                }
            }
        }
    }
    if (const auto* m = row.if_contains("message"); m != nullptr && m->is_object()) {
        if (const auto* c = m->as_object().if_contains("content")) {
            s += " " + json::serialize(*c);
        }
    }
    if (const auto* r = row.if_contains("result")) {
        s += " result=" + json::serialize(*r);
    }
    return s;
}

std::vector<std::string> shapes_of(const std::string& out) {
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            v.push_back(shape(json::parse(line).as_object()));
        }
    }
    return v;
}

TEST(ClaudeRun, StdoutIsClaudesOwnRowForRow) {
    SLUICE_NEED_CLAUDE();
    TempDir dir;
    FakeAnthropic fake(dir, script_for(dir.path()));
    const auto claude = claude_wrapper(dir, fake);
    const auto cwd = dir.file("cwd");
    fs::create_directories(cwd);
    const std::string own = "cd '" + cwd + "' && timeout 60 '" + claude
                            + "' -p --output-format stream-json --verbose "
                              "--include-partial-messages 'think about hello' >"
                            + dir.file("own.jsonl") + " 2>/dev/null";
    ASSERT_EQ(std::system(own.c_str()), 0);
    const std::string ours = "timeout 60 " + std::string(SLUICE_BINARY)
                             + " run --agent claude --claude-bin '" + claude + "' --cwd '" + cwd
                             + "' 'think about hello' >" + dir.file("ours.jsonl") + " 2>"
                             + dir.file("ours.err");
    ASSERT_EQ(std::system(ours.c_str()), 0) << slurp(dir.file("ours.err"));
    const auto want = shapes_of(slurp(dir.file("own.jsonl")));
    const auto got = shapes_of(slurp(dir.file("ours.jsonl")));
    EXPECT_GE(want.size(), 10U);
    EXPECT_EQ(got, want);
}

} // namespace
