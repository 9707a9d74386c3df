// Tests of the process agent with tests/support/fake_agent.py speaking stream-json.
#include "support/io_loop.hpp"
#include "unit/runtime/turn_recorder.hpp"

#include <sluice/runtime/agents/agent.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using test::run_turn;
using test::TurnRecorder;
using namespace std::chrono_literals;

std::string fake_agent() {
    return (std::filesystem::path(__FILE__).parent_path() / "../../support/fake_agent.py")
        .lexically_normal()
        .string();
}

ProcessAgentConfig fake_config(const std::string& flags = {}) {
    ProcessAgentConfig c;
    c.argv = {"python3", fake_agent()};
    if (!flags.empty()) {
        c.argv.push_back(flags);
    }
    return c;
}

long pid_of(const TurnRecorder& rec) {
    for (const auto& r : rec.rows()) {
        if (r.at("type") == "system" && r.contains("pid")) {
            return static_cast<long>(r.at("pid").as_int64());
        }
    }
    return 0;
}

// Runs the loop until `pid` is gone (reaped, so not even a zombie), for up to 5 s.
bool process_gone(sluice::test::IoLoop& loop, long pid) {
    return loop.until(
        [pid] { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }, 5s);
}

TEST(ProcessAgent, TurnsRowsIntoFramesAndPartialsIntoPreviews) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    EXPECT_EQ(agent->kind(), "process");
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(
        rec->row_types(), (std::vector<std::string>{"system", "assistant", "assistant", "result"}));
    EXPECT_EQ(rec->text(), "you said: hello");
    EXPECT_EQ(rec->thinking(), "pondering");
    EXPECT_EQ(rec->rows().back().at("result"), "you said: hello");
}

TEST(ProcessAgent, ToolInputPartialsCarryTheToolId) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "tool");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(json::parse(rec->tool_input()), json::parse(R"({"command": "ls"})"));
    for (const auto& p : rec->previews()) {
        if (const auto* d = std::get_if<llm::ToolUseDelta>(&p)) {
            EXPECT_EQ(d->tool_id, "toolu_fake_1");
        }
    }
    const auto types = rec->row_types();
    EXPECT_EQ(
        types, (std::vector<std::string>{"system", "assistant", "user", "assistant", "result"}));
}

TEST(ProcessAgent, OneProcessServesSeveralTurns) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto first = run_turn(*agent, "one");
    auto second = run_turn(*agent, "two");
    ASSERT_TRUE(loop.until([&] { return second->end_count() > 0; }, 20s));
    ASSERT_TRUE(loop.until([&] { return first->end_count() > 0; }, 1s));
    EXPECT_EQ(first->rows().back().at("result"), "you said: one");
    EXPECT_EQ(second->rows().back().at("result"), "you said: two");
    EXPECT_EQ(second->row_types().front(), "assistant"); // no second init: same process
}

TEST(ProcessAgent, DropsNonJsonLinesAndThePromptEcho) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "noise");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended);
    for (const auto& t : rec->row_types()) {
        EXPECT_NE(t, "user");
    }
}

TEST(ProcessAgent, CancelSendsAnInterruptAndTheProcessLivesOn) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    CancellationToken cancel;
    auto rec = run_turn(*agent, "hang", cancel);
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 1; }, 20s));
    const long pid = pid_of(*rec);
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(rec->rows().back().at("subtype"), "error_during_execution");
    auto next = run_turn(*agent, "after");
    ASSERT_TRUE(loop.until([&] { return next->end_count() > 0; }, 20s));
    EXPECT_EQ(next->rows().back().at("result"), "you said: after");
    EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), 0); // the same process still runs
}

TEST(ProcessAgent, CancelTerminatesAnAgentThatIgnoresInterrupts) {
    sluice::test::IoLoop loop;
    auto c = fake_config("--ignore-interrupt");
    c.interrupt_grace = 200ms;
    c.terminate_grace = 500ms;
    auto agent = make_process_agent(loop.executor(), c);
    CancellationToken cancel;
    auto rec = run_turn(*agent, "hang", cancel);
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 1; }, 20s));
    const long pid = pid_of(*rec);
    ASSERT_GT(pid, 0);
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_TRUE(process_gone(loop, pid));
    // The next turn starts a new process.
    auto next = run_turn(*agent, "again");
    ASSERT_TRUE(loop.until([&] { return next->end_count() > 0; }, 20s));
    EXPECT_EQ(next->end().state, TurnEnd::State::ended);
    EXPECT_NE(pid_of(*next), pid);
}

TEST(ProcessAgent, DestroyingTheAgentEndsTheProcess) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config("--ignore-interrupt"));
    auto rec = run_turn(*agent, "hang");
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 1; }, 20s));
    const long pid = pid_of(*rec);
    ASSERT_GT(pid, 0);
    agent.reset();
    EXPECT_EQ(rec->end_count(), 0); // the destructor never calls a sink inline
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }));
    EXPECT_EQ(rec->end_count(), 1);
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_TRUE(process_gone(loop, pid));
}

TEST(ProcessAgent, ARunawayLineFailsTheTurn) {
    sluice::test::IoLoop loop;
    auto c = fake_config();
    c.max_line_bytes = 1000;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "longline 100000");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("longer than 1000 bytes"), std::string::npos);
    // The agent survives it: the next turn runs (on a new process).
    auto next = run_turn(*agent, "after the long line");
    ASSERT_TRUE(loop.until([&] { return next->end_count() > 0; }, 20s));
    EXPECT_EQ(next->end().state, TurnEnd::State::ended) << next->end().error;
    EXPECT_EQ(next->rows().back().at("result"), "you said: after the long line");
}

TEST(ProcessAgent, ACrashingAgentFailsTheTurnWithTheSignalAndItsStderr) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "crash");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("killed by signal 6"), std::string::npos) << rec->end().error;
    EXPECT_NE(rec->end().error.find("about to abort"), std::string::npos) << rec->end().error;
    EXPECT_EQ(rec->end_count(), 1);
}

TEST(ProcessAgent, SinkCallsNeverRunInsideStartTurn) {
    sluice::test::IoLoop loop;
    ProcessAgentConfig c;
    c.argv = {"/nonexistent/agent-binary"}; // fails at once: the tempting place for an inline end
    auto agent = make_process_agent(loop.executor(), c);
    CancellationToken cancelled;
    cancelled.cancel();
    auto a = run_turn(*agent, "hi");
    auto b = run_turn(*agent, "hi", cancelled);
    EXPECT_EQ(a->end_count(), 0);
    EXPECT_EQ(b->end_count(), 0);
    ASSERT_TRUE(loop.until([&] { return a->end_count() > 0 && b->end_count() > 0; }));
    EXPECT_EQ(a->end().state, TurnEnd::State::failed);
    EXPECT_EQ(b->end().state, TurnEnd::State::cancelled);
}

TEST(ProcessAgent, AQueuedTurnCancelledWhileAnotherRunsEndsAtOnce) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto running = run_turn(*agent, "hang");
    CancellationToken cancel_queued;
    auto queued = run_turn(*agent, "never", cancel_queued);
    ASSERT_TRUE(loop.until([&] { return !running->previews().empty(); }));
    cancel_queued.cancel();
    ASSERT_TRUE(loop.until([&] { return queued->end_count() > 0; }));
    EXPECT_EQ(queued->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(running->end_count(), 0); // the first turn still runs
}

std::size_t thread_count() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
        ++n;
    }
    return n;
}

TEST(ProcessAgent, AHundredAgentsOnOneIoContextStartNoThread) {
    sluice::test::IoLoop loop;
    const std::size_t before = thread_count();
    std::vector<std::unique_ptr<Agent>> agents;
    std::vector<std::shared_ptr<TurnRecorder>> turns;
    for (int i = 0; i < 100; ++i) {
        agents.push_back(make_process_agent(loop.executor(), fake_config()));
        turns.push_back(run_turn(*agents.back(), "hello " + std::to_string(i)));
    }
    const auto ended = [](const auto& t) { return t->end_count() > 0; };
    ASSERT_TRUE(loop.until([&] { return std::all_of(turns.begin(), turns.end(), ended); }, 120s));
    // Every process is alive (its turn ended, the agent holds it): the peak.
    const std::size_t during = thread_count();
    for (int i = 0; i < 100; ++i) {
        const auto& rows = turns[static_cast<std::size_t>(i)]->rows();
        EXPECT_EQ(rows.back().at("result").as_string(), "you said: hello " + std::to_string(i));
    }
    // Basis: nothing here may start a thread; 2 allows for a runtime-internal helper (none today).
    EXPECT_LE(during, before + 2) << "threads before " << before << ", with 100 agents " << during;
    std::vector<long> pids;
    for (const auto& t : turns) {
        pids.push_back(pid_of(*t));
    }
    agents.clear();
    for (long pid : pids) {
        EXPECT_TRUE(process_gone(loop, pid));
    }
}

TEST(ProcessAgent, AnExitingAgentFailsTheTurnWithItsStderr) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "exit");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("exit status 3"), std::string::npos);
    EXPECT_NE(rec->end().error.find("fatal: boom"), std::string::npos);
    auto next = run_turn(*agent, "revived");
    ASSERT_TRUE(loop.until([&] { return next->end_count() > 0; }, 20s));
    EXPECT_EQ(next->rows().back().at("result"), "you said: revived");
}

TEST(ProcessAgent, AnAgentThatClosesItsOutputButLingersIsKilled) {
    sluice::test::IoLoop loop;
    ProcessAgentConfig c;
    c.argv = {"/bin/sh", "-c", "exec >&-; sleep 60"};
    c.terminate_grace = 300ms;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "hi");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("killed by signal 9"), std::string::npos) << rec->end().error;
}

TEST(ProcessAgent, PermissionPromptsAreDeniedWhenNobodyHostsThem) {
    sluice::test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "permission");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->rows().back().at("result"), "permission answered: success deny");
}

TEST(ProcessAgent, HostedPermissionPromptBecomesARowAndWaitsForItsAnswer) {
    sluice::test::IoLoop loop;
    auto c = fake_config();
    c.host_permissions = true;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "permission");
    const auto asked = [&rec]() -> std::optional<json::object> {
        for (const auto& r : rec->rows()) {
            if (r.contains("subtype") && r.at("subtype") == "permission_request") {
                return r;
            }
        }
        return std::nullopt;
    };
    ASSERT_TRUE(loop.until([&] { return asked().has_value(); }, 20s));
    const auto ask = *asked();
    EXPECT_EQ(ask.at("subtype"), "permission_request");
    EXPECT_EQ(ask.at("request_id"), "perm-1");
    EXPECT_EQ(ask.at("tool_name"), "Bash");
    EXPECT_EQ(rec->end_count(), 0U) << "the turn waits for the answer";
    PermissionAnswer a;
    a.request_id = "perm-1";
    a.allow = true;
    a.updated_input = boost::json::parse(R"({"command":"pwd"})");
    agent->answer_permission(a);
    agent->answer_permission(a); // a second answer finds nothing pending: dropped
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->rows().back().at("result"), "permission answered: success allow pwd");
}

// The first event of kind T the turn saw, if any.
template <class T>
std::optional<T> first_event(const TurnRecorder& rec) {
    for (const auto& e : rec.events()) {
        if (const auto* p = std::get_if<T>(&e)) {
            return *p;
        }
    }
    return std::nullopt;
}

TEST(ProcessAgent, ProtocolRowsArriveAsTypedEvents) {
    sluice::test::IoLoop loop;
    auto c = fake_config();
    c.host_permissions = true;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "permission");
    ASSERT_TRUE(loop.until([&] { return first_event<PermissionRequest>(*rec).has_value(); }, 20s));
    const auto ask = *first_event<PermissionRequest>(*rec);
    EXPECT_EQ(ask.request_id, "perm-1");
    EXPECT_EQ(ask.tool_name, "Bash");
    EXPECT_EQ(ask.input.at("command"), "ls");
    EXPECT_EQ(ask.title, "Allow Bash?");
    const auto started = first_event<SessionStarted>(*rec);
    ASSERT_TRUE(started.has_value()) << "the init row is a SessionStarted event";
    EXPECT_FALSE(started->session_id.empty());
    EXPECT_TRUE(started->row.contains("pid")) << "the event keeps the agent's row whole";
    PermissionAnswer a;
    a.request_id = "perm-1";
    agent->answer_permission(a);
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));

    auto waits = run_turn(*agent, "needs you");
    ASSERT_TRUE(loop.until([&] { return waits->end_count() > 0; }, 20s));
    std::vector<std::pair<std::string, bool>> states;
    for (const auto& e : waits->events()) {
        if (const auto* s = std::get_if<SessionStateChanged>(&e)) {
            states.emplace_back(s->state, s->requires_action());
        }
    }
    EXPECT_EQ(
        states,
        (std::vector<std::pair<std::string, bool>>{{"requires_action", true}, {"running", false}}));
}

TEST(ProcessAgent, AMissingCommandFailsTheTurn) {
    sluice::test::IoLoop loop;
    ProcessAgentConfig c;
    c.argv = {"/nonexistent/agent-binary"};
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "hi");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("cannot start"), std::string::npos);
}

TEST(ProcessAgent, ShellArgvRunsAConfiguredCommandLine) {
    EXPECT_EQ(
        ProcessAgentConfig::shell_argv("claude -p"),
        (std::vector<std::string>{"/bin/sh", "-c", "exec claude -p"}));
    EXPECT_EQ(ProcessAgentConfig::claude_argv().front(), "claude");
}

} // namespace
} // namespace sluice::runtime
