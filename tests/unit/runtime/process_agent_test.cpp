// Tests of the process agent with tests/support/fake_agent.py speaking stream-json.
#include "support/io_loop.hpp"
#include "unit/runtime/turn_recorder.hpp"

#include <sluice/runtime/agent.hpp>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <thread>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using test::TurnRecorder;
using namespace std::chrono_literals;

std::string fake_agent() {
    return (std::filesystem::path(__FILE__).parent_path() / "../../support/fake_agent.py").lexically_normal().string();
}

ProcessAgentConfig fake_config(const std::string& flags = {}) {
    ProcessAgentConfig c;
    c.argv = {"python3", fake_agent()};
    if (!flags.empty()) {
        c.argv.push_back(flags);
    }
    return c;
}

std::shared_ptr<TurnRecorder> run_turn(Agent& agent, std::string prompt, CancellationToken cancel = {}) {
    auto rec = std::make_shared<TurnRecorder>();
    agent.start_turn(std::move(prompt), std::move(cancel), rec);
    return rec;
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
bool process_gone(test::IoLoop& loop, long pid) {
    return loop.until([pid] { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }, 5s);
}

TEST(ProcessAgent, TurnsRowsIntoFramesAndPartialsIntoPreviews) {
    test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    EXPECT_EQ(agent->kind(), "process");
    auto rec = run_turn(*agent, "hello");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(rec->row_types(), (std::vector<std::string>{"system", "assistant", "assistant", "result"}));
    EXPECT_EQ(rec->text(), "you said: hello");
    EXPECT_EQ(rec->thinking(), "pondering");
    EXPECT_EQ(rec->rows().back().at("result"), "you said: hello");
}

TEST(ProcessAgent, ToolInputPartialsCarryTheToolId) {
    test::IoLoop loop;
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
    EXPECT_EQ(types, (std::vector<std::string>{"system", "assistant", "user", "assistant", "result"}));
}

TEST(ProcessAgent, OneProcessServesSeveralTurns) {
    test::IoLoop loop;
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
    test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "noise");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended);
    for (const auto& t : rec->row_types()) {
        EXPECT_NE(t, "user");
    }
}

TEST(ProcessAgent, CancelSendsAnInterruptAndTheProcessLivesOn) {
    test::IoLoop loop;
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
    test::IoLoop loop;
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
    test::IoLoop loop;
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
    test::IoLoop loop;
    auto c = fake_config();
    c.max_line_bytes = 1000;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "longline 100000");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("longer than 1000 bytes"), std::string::npos);
}

TEST(ProcessAgent, AnExitingAgentFailsTheTurnWithItsStderr) {
    test::IoLoop loop;
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
    test::IoLoop loop;
    ProcessAgentConfig c;
    c.argv = {"/bin/sh", "-c", "exec >&-; sleep 60"};
    c.terminate_grace = 300ms;
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "hi");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("killed by signal 9"), std::string::npos) << rec->end().error;
}

TEST(ProcessAgent, ControlRequestsAreRefusedSoTheAgentGoesOn) {
    test::IoLoop loop;
    auto agent = make_process_agent(loop.executor(), fake_config());
    auto rec = run_turn(*agent, "permission");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->rows().back().at("result"), "permission answered: error");
}

TEST(ProcessAgent, AMissingCommandFailsTheTurn) {
    test::IoLoop loop;
    ProcessAgentConfig c;
    c.argv = {"/nonexistent/agent-binary"};
    auto agent = make_process_agent(loop.executor(), c);
    auto rec = run_turn(*agent, "hi");
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("cannot start"), std::string::npos);
}

TEST(ProcessAgent, ShellArgvRunsAConfiguredCommandLine) {
    EXPECT_EQ(ProcessAgentConfig::shell_argv("claude -p"),
              (std::vector<std::string>{"/bin/sh", "-c", "exec claude -p"}));
    EXPECT_EQ(ProcessAgentConfig::claude_argv().front(), "claude");
}

} // namespace
} // namespace sluice::runtime
