// Tests of the builtin agent (Runtime + FrameBuilder behind the Agent interface).
#include "support/io_loop.hpp"
#include "unit/runtime/turn_recorder.hpp"

#include <sluice/runtime/agents/agent.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using test::TurnRecorder;
using namespace std::chrono_literals;

struct ScriptFile {
    fs::path path;

    explicit ScriptFile(std::string_view text) {
        path = fs::temp_directory_path()
               / ("sluice-script-" + std::to_string(::getpid()) + "-"
                  + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".json");
        std::ofstream(path) << text;
    }

    ~ScriptFile() { fs::remove(path); }
};

RuntimeConfig scripted(const std::string& script_path = {}) {
    RuntimeConfig c;
    c.provider.kind = "scripted";
    c.provider.script_path = script_path;
    c.provider.script_pace = 0;
    return c;
}

TEST(BuiltinAgent, RunsTheDefaultScriptAsRowsAndPreviews) {
    sluice::test::IoLoop loop;
    auto agent = make_builtin_agent(loop.executor(), scripted(), {});
    EXPECT_EQ(agent->kind(), "builtin");
    auto rec = std::make_shared<TurnRecorder>();
    agent->start_turn("hello", {}, rec);
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    const auto types = rec->row_types();
    ASSERT_EQ(types, (std::vector<std::string>{"assistant", "user", "assistant", "result"}));
    const auto rows = rec->rows();
    EXPECT_EQ(
        rows[1].at("message").at("content").as_array()[0].at("content"),
        "hello from the echo tool");
    EXPECT_EQ(rows[3].at("is_error"), false);
    EXPECT_FALSE(rec->text().empty());
    EXPECT_FALSE(rec->thinking().empty());
    EXPECT_EQ(rec->tool_output(), "hello from the echo tool");
    EXPECT_EQ(rec->end_count(), 1);
}

TEST(BuiltinAgent, KeepsHistoryAcrossTurnsAndFromRows) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"rounds":[{"events":[{"text":"saw {{message_count}}"}]}]})");
    std::vector<json::object> earlier{
        json::parse(R"({"type":"user","message":{"role":"user","content":"old prompt"}})")
            .as_object(),
        json::parse(R"({"type":"assistant","message":{"id":"m0","role":"assistant",)"
                    R"("content":[{"type":"text","text":"old answer"}]}})")
            .as_object(),
        json::parse(R"({"type":"result","subtype":"success"})").as_object()};
    auto agent = make_builtin_agent(loop.executor(), scripted(script.path.string()), earlier);
    auto first = std::make_shared<TurnRecorder>();
    agent->start_turn("one", {}, first);
    ASSERT_TRUE(loop.until([&] { return first->end_count() > 0; }, 20s));
    EXPECT_EQ(first->rows().back().at("result"), "saw 3");
    auto second = std::make_shared<TurnRecorder>();
    agent->start_turn("two", {}, second);
    ASSERT_TRUE(loop.until([&] { return second->end_count() > 0; }, 20s));
    EXPECT_EQ(second->rows().back().at("result"), "saw 5");
}

TEST(BuiltinAgent, TurnsQueueInOrder) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"delay_ms":2,"rounds":[{"events":[{"text":"n={{message_count}}"}]}]})");
    auto c = scripted(script.path.string());
    c.provider.script_pace = 1;
    auto agent = make_builtin_agent(loop.executor(), c, {});
    auto a = std::make_shared<TurnRecorder>();
    auto b = std::make_shared<TurnRecorder>();
    agent->start_turn("a", {}, a);
    agent->start_turn("b", {}, b);
    ASSERT_TRUE(loop.until([&] { return b->end_count() > 0; }, 20s));
    ASSERT_TRUE(loop.until([&] { return a->end_count() > 0; }, 20s));
    EXPECT_EQ(a->rows().back().at("result"), "n=1");
    EXPECT_EQ(b->rows().back().at("result"), "n=3");
}

TEST(BuiltinAgent, CancelEndsTheTurnCancelled) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto c = scripted(script.path.string());
    c.provider.script_pace = 1;
    auto agent = make_builtin_agent(loop.executor(), c, {});
    auto rec = std::make_shared<TurnRecorder>();
    CancellationToken cancel;
    agent->start_turn("go", cancel, rec);
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 1; }, 20s));
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    ASSERT_FALSE(rec->rows().empty());
    EXPECT_EQ(rec->rows().back().at("type"), "result");
    EXPECT_EQ(rec->rows().back().at("is_error"), true);
}

TEST(BuiltinAgent, ACancelledQueuedTurnEndsWhileAnotherRuns) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto c = scripted(script.path.string());
    c.provider.script_pace = 1;
    auto agent = make_builtin_agent(loop.executor(), c, {});
    auto running = std::make_shared<TurnRecorder>();
    auto queued = std::make_shared<TurnRecorder>();
    CancellationToken cancel_queued;
    agent->start_turn("long", {}, running);
    agent->start_turn("never", cancel_queued, queued);
    ASSERT_TRUE(loop.until([&] { return running->previews().size() >= 1; }, 20s));
    cancel_queued.cancel();
    ASSERT_TRUE(loop.until([&] { return queued->end_count() > 0; }, 20s));
    EXPECT_EQ(queued->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(running->end_count(), 0); // the first turn still runs
}

TEST(BuiltinAgent, DestroyingTheAgentEndsARunningTurn) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto c = scripted(script.path.string());
    c.provider.script_pace = 1;
    auto agent = make_builtin_agent(loop.executor(), c, {});
    auto rec = std::make_shared<TurnRecorder>();
    auto queued = std::make_shared<TurnRecorder>();
    agent->start_turn("go", {}, rec);
    agent->start_turn("later", {}, queued);
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 1; }, 20s));
    agent.reset();
    EXPECT_EQ(rec->end_count(), 0); // the destructor never calls a sink inline
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0 && queued->end_count() > 0; }));
    EXPECT_EQ(rec->end_count(), 1);
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(queued->end_count(), 1);
    EXPECT_EQ(queued->end().state, TurnEnd::State::cancelled);
}

TEST(BuiltinAgent, ProviderFailureEndsTheTurnFailed) {
    sluice::test::IoLoop loop;
    ScriptFile script(R"({"rounds":[{"events":[{"error":"model not found"}]}]})");
    auto agent = make_builtin_agent(loop.executor(), scripted(script.path.string()), {});
    auto rec = std::make_shared<TurnRecorder>();
    agent->start_turn("go", {}, rec);
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("model not found"), std::string::npos);
    EXPECT_EQ(rec->row_types(), std::vector<std::string>{"result"});
}

TEST(BuiltinAgent, BadConfigurationThrows) {
    sluice::test::IoLoop loop;
    auto c = scripted();
    c.tools = {"format_disk"};
    EXPECT_THROW((void)make_builtin_agent(loop.executor(), c, {}), std::invalid_argument);
}

} // namespace
} // namespace sluice::runtime

namespace sluice::runtime {
namespace {

TEST(BuiltinAgent, AnUnansweredEarlierPromptStillYieldsEveryRow) {
    sluice::test::IoLoop loop;
    // The seat's last turn died before any answer: its prompt merges with the new one.
    ScriptFile script(R"({"rounds":[{"events":[{"text":"answer"}]}]})");
    std::vector<json::object> earlier{
        json::parse(R"({"type":"user","message":{"role":"user","content":"lost prompt"}})")
            .as_object()};
    auto agent = make_builtin_agent(loop.executor(), scripted(script.path.string()), earlier);
    auto rec = std::make_shared<TurnRecorder>();
    agent->start_turn("new prompt", {}, rec);
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->row_types(), (std::vector<std::string>{"assistant", "result"}));
}

} // namespace
} // namespace sluice::runtime
