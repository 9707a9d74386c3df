// Tests of the codex agent against tests/support/fake_codex.py, a stand-in for `codex app-server`
// for what the real CLI cannot be made to do on demand (file change approvals, plans, requests
// sluice does not serve, an interrupt that is not honoured, a crash, a resume Codex refuses).
// The real CLI runs in tests/e2e/codex_test.cpp.
#include "support/files.hpp"
#include "support/io_loop.hpp"
#include "unit/conversation/fixtures.hpp"
#include "unit/runtime/turn_recorder.hpp"

#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using test::events_of;
using test::run_turn;
using test::TurnRecorder;
using namespace std::chrono_literals;

std::string fake_codex() {
    return (std::filesystem::path(__FILE__).parent_path() / "../../support/fake_codex.py")
        .lexically_normal()
        .string();
}

// The fake run through a wrapper (the agent runs `<bin> app-server`), logging what it receives.
struct Fake {
    sluice::test::TempDir dir;
    std::string log = dir.file("received.jsonl");
    std::string threads = dir.file("threads");
    CodexAgentConfig config;

    explicit Fake(const std::string& env = {}) {
        const auto bin = dir.file("codex");
        std::ofstream(bin) << "#!/bin/sh\nexport FAKE_CODEX_LOG='" << log
                           << "' FAKE_CODEX_THREADS='" << threads << "' " << env
                           << "\nexec python3 '" << fake_codex() << "' \"$@\"\n";
        std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
        config.bin = bin;
        config.working_dir = dir.path();
    }

    // Every message the fake received with `method`.
    [[nodiscard]] std::vector<json::object> received(std::string_view method) const {
        std::vector<json::object> out;
        std::istringstream in(sluice::test::slurp(log));
        for (std::string line; std::getline(in, line);) {
            auto v = json::parse(line).as_object();
            if (const auto* m = v.if_contains("method");
                m != nullptr && m->is_string() && m->get_string() == method) {
                out.push_back(std::move(v));
            }
        }
        return out;
    }
};

// The rows of `rec` of `type`.
std::vector<json::object> rows_of(const TurnRecorder& rec, std::string_view type) {
    std::vector<json::object> out;
    for (const auto& r : rec.rows()) {
        if (r.at("type").is_string() && r.at("type").get_string() == type) {
            out.push_back(r);
        }
    }
    return out;
}

TEST(CodexAgent, AnswersAsFramesWithUsageAndStartsOneThread) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.model = "gpt-test";
    auto agent = make_codex_agent(loop.executor(), fake.config);
    EXPECT_EQ(agent->kind(), "codex");
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(rec->row_types(), (std::vector<std::string>{"system", "assistant", "result"}));
    EXPECT_EQ(rec->text(), "echo: hello");
    const auto init = rec->rows().front();
    EXPECT_EQ(init.at("subtype"), "init");
    EXPECT_EQ(init.at("model"), "gpt-test");
    const auto result = rec->rows().back();
    EXPECT_EQ(result.at("is_error"), false);
    EXPECT_EQ(result.at("result"), "echo: hello");
    EXPECT_EQ(result.at("usage").at("input_tokens"), 15) << "cached input is counted apart";
    EXPECT_EQ(result.at("usage").at("cache_read_input_tokens"), 5);
    EXPECT_EQ(result.at("usage").at("output_tokens"), 10);
    EXPECT_FALSE(rec->previews().empty());

    auto second = run_turn(*agent, "again");
    ASSERT_TRUE(loop.until([&] { return second->end_count() > 0; }, 20s));
    EXPECT_EQ(second->row_types(), (std::vector<std::string>{"assistant", "result"}))
        << "the same process and thread";
    EXPECT_EQ(fake.received("thread/start").size(), 1U);
    ASSERT_EQ(fake.received("turn/start").size(), 2U);
    EXPECT_EQ(fake.received("turn/start").back().at("params").at("model"), "gpt-test");
    EXPECT_EQ(fake.received("initialize").size(), 1U);
    EXPECT_EQ(
        fake.received("initialize").front().at("params").at("capabilities").at("experimentalApi"),
        true);
}

TEST(CodexAgent, AFileChangeAsksAndItsAnswerIsCodexsDecision) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    for (const bool allow : {false, true}) {
        auto rec = run_turn(*agent, "patch please");
        ASSERT_TRUE(loop.until([&] { return !events_of<PermissionRequest>(*rec).empty(); }, 20s));
        const auto asks = events_of<PermissionRequest>(*rec);
        const auto* ask = &asks.front();
        EXPECT_EQ(ask->tool_name, "apply_patch");
        EXPECT_NE(json::serialize(ask->input).find("hello.txt"), std::string::npos) << ask->input;
        EXPECT_EQ(ask->decision_reason, "the test asks to write a file");
        agent->answer_permission(
            {.request_id = ask->request_id, .allow = allow, .message = {}, .updated_input = {}});
        ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
        EXPECT_EQ(rec->text(), allow ? "patch completed" : "patch declined");
        const auto calls = rows_of(*rec, "assistant");
        ASSERT_FALSE(calls.empty());
        EXPECT_EQ(calls.front().at("message").at("content").at(0).at("name"), "apply_patch");
        const auto results = rows_of(*rec, "user");
        ASSERT_EQ(results.size(), 1U);
        EXPECT_EQ(results.front().at("message").at("content").at(0).at("is_error"), !allow);
    }
    // The answers went back as Codex's decisions.
    std::istringstream in(sluice::test::slurp(fake.log));
    std::vector<std::string> decisions;
    for (std::string line; std::getline(in, line);) {
        const auto v = json::parse(line).as_object();
        if (v.contains("result") && v.at("result").as_object().contains("decision")) {
            decisions.emplace_back(v.at("result").at("decision").as_string());
        }
    }
    EXPECT_EQ(decisions, (std::vector<std::string>{"decline", "accept"}));
}

TEST(CodexAgent, APlanIsATodoListAndUnservedRequestsAreRefused) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    auto rec = run_turn(*agent, "make a plan");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    const auto calls = rows_of(*rec, "assistant");
    ASSERT_GE(calls.size(), 2U);
    const auto& todo = calls.front().at("message").at("content").at(0);
    EXPECT_EQ(todo.at("name"), "TodoWrite");
    EXPECT_EQ(todo.at("input").at("todos").at(1).at("status"), "in_progress");
    EXPECT_EQ(todo.at("input").at("todos").at(0).at("content"), "read the file");

    auto asked = run_turn(*agent, "ask me something");
    ASSERT_TRUE(loop.until([&] { return asked->end_count() > 0; }, 20s));
    EXPECT_NE(asked->text().find("-32601"), std::string::npos) << asked->text();
    EXPECT_TRUE(events_of<PermissionRequest>(*asked).empty())
        << "no prompt for a request sluice does not serve";
}

TEST(CodexAgent, APromptCodexTookBackIsWithdrawn) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    auto rec = run_turn(*agent, "withdraw it");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    const auto asks = events_of<PermissionRequest>(*rec);
    const auto resolved = events_of<PermissionResolved>(*rec);
    ASSERT_EQ(asks.size(), 1U);
    ASSERT_EQ(resolved.size(), 1U);
    const auto& gone = resolved.front();
    EXPECT_EQ(gone.request_id, asks.front().request_id);
    EXPECT_EQ(gone.behavior, PermissionResolved::Behavior::withdrawn);
    EXPECT_EQ(gone.by, "agent");
}

TEST(CodexAgent, ACancelCodexIgnoresEndsTheProcessAndTheThreadResumes) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.interrupt_grace = 300ms;
    fake.config.terminate_grace = 500ms;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    CancellationToken cancel;
    auto rec = run_turn(*agent, "deaf", cancel);
    ASSERT_TRUE(loop.until([&] { return !rec->previews().empty(); }, 20s));
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(fake.received("turn/interrupt").size(), 1U);
    const std::string thread(rec->rows().front().at("session_id").as_string());

    auto next = run_turn(*agent, "after");
    ASSERT_TRUE(loop.until([&] { return next->end_count() > 0; }, 20s));
    EXPECT_EQ(next->end().state, TurnEnd::State::ended) << next->end().error;
    ASSERT_EQ(fake.received("thread/resume").size(), 1U) << "a new process resumes the thread";
    EXPECT_EQ(
        fake.received("thread/resume").front().at("params").at("threadId").as_string(), thread);
    EXPECT_EQ(fake.received("thread/resume").front().at("params").at("excludeTurns"), true);
}

TEST(CodexAgent, ACrashOrAnOverlongLineFailsTheTurnWithTheReason) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.max_line_bytes = 1 << 20;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    auto rec = run_turn(*agent, "exit now");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "codex exited (exit status 3): fatal: the fake was asked to exit");

    rec = run_turn(*agent, "longline");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "codex wrote a line longer than 1048576 bytes");

    rec = run_turn(*agent, "fine again");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
}

TEST(CodexAgent, AThreadCodexCannotResumeFailsOnceThenANewOneStarts) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.thread_id = "thread-gone";
    auto agent = make_codex_agent(loop.executor(), fake.config);
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("could not resume thread thread-gone"), std::string::npos)
        << rec->end().error;
    EXPECT_NE(rec->end().error.find("no rollout found"), std::string::npos) << rec->end().error;
    rec = run_turn(*agent, "hello again");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(fake.received("thread/start").size(), 1U);
}

TEST(CodexAgent, ACodexThatNeverAnswersItsStartFailsTheTurn) {
    sluice::test::IoLoop loop;
    Fake fake("FAKE_CODEX_NO_INIT=1");
    fake.config.start_timeout = 500ms;
    fake.config.terminate_grace = 300ms;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "codex did not answer its start within 500 ms");
}

TEST(CodexAgent, SettingsAreCheckedAndCarriedByTheNextTurn) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_codex_agent(loop.executor(), fake.config);
    EXPECT_TRUE(agent->takes_settings());
    std::optional<Agent::SettingsAnswer> got;
    agent->apply_settings(
        {.permission_mode = "acceptEdits", .model = {}}, [&](auto a) { got = a; });
    ASSERT_TRUE(loop.until([&] { return got.has_value(); }, 5s));
    EXPECT_NE(got->error.find("approval policy"), std::string::npos) << got->error;
    got.reset();
    agent->apply_settings(
        {.permission_mode = "never", .model = "gpt-other"}, [&](auto a) { got = a; });
    ASSERT_TRUE(loop.until([&] { return got.has_value(); }, 5s));
    EXPECT_EQ(got->error, "");
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    const auto start = fake.received("turn/start").back().at("params");
    EXPECT_EQ(start.at("approvalPolicy"), "never");
    EXPECT_EQ(start.at("model"), "gpt-other");
}

} // namespace
} // namespace sluice::runtime
