// Tests of the Runtime turn loop with the scripted provider and real tools.
#include "support/io_thread.hpp"
#include "support/run_async.hpp"

#include <sluice/core/relay_async.hpp>
#include <sluice/runtime/providers/scripted.hpp>
#include <sluice/runtime/runtime.hpp>
#include <sluice/runtime/tools/tools.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <thread>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<json::value> prompt(std::string_view text) {
    return {json::object{{"role", "user"}, {"content", text}}};
}

std::vector<StreamEvent> drain(RelayReceiver& rx) {
    std::vector<StreamEvent> out;
    while (auto ev = rx.next()) {
        out.push_back(std::move(*ev));
    }
    return out;
}

template <class T>
std::vector<T> all_of(const std::vector<StreamEvent>& evs) {
    std::vector<T> out;
    for (const auto& e : evs) {
        if (const auto* p = std::get_if<T>(&e)) {
            out.push_back(*p);
        }
    }
    return out;
}

template <class T>
std::string joined(const std::vector<StreamEvent>& evs) {
    std::string s;
    for (const auto& e : all_of<T>(evs)) {
        if constexpr (std::is_same_v<T, llm::ToolResultDelta>) {
            s += e.delta;
        } else {
            s += e.text;
        }
    }
    return s;
}

RuntimeConfig config_with(std::vector<std::string> tools = {}) {
    RuntimeConfig c;
    c.tools = std::move(tools);
    return c;
}

std::unique_ptr<Runtime>
scripted_runtime(boost::asio::any_io_executor ex, std::string_view script, RuntimeConfig c = {}) {
    auto tools = make_tools(c.tools, ToolOptions{c.working_dir});
    return std::make_unique<Runtime>(
        std::move(ex),
        c,
        std::shared_ptr<Provider>(make_scripted_provider(script, 0)),
        std::move(tools));
}

TEST(Runtime, StreamsTextThenUsageThenDone) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[{"events":[{"text":"hello "},{"text":"world"}],"usage":{"input":3,)"
        R"("output":4}}]})");
    auto rx = rt->run_stream_with_messages(prompt("hi"), {});
    auto evs = drain(rx);
    EXPECT_EQ(joined<llm::Text>(evs), "hello world");
    ASSERT_GE(evs.size(), 3U);
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    const auto usage = std::get<session::Usage>(evs[evs.size() - 2]);
    EXPECT_EQ(usage.input, 3U);
    EXPECT_EQ(usage.output, 4U);
    EXPECT_TRUE(all_of<session::Error>(evs).empty());
    const auto hist = all_of<session::MessageHistory>(evs);
    ASSERT_EQ(hist.size(), 1U);
    ASSERT_EQ(hist[0].messages->size(), 2U);
    EXPECT_EQ((*hist[0].messages)[1]->at("content").as_array()[0].at("text"), "hello world");
}

TEST(Runtime, StreamsThinkingBeforeText) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[{"events":[{"thinking":"let me see","signature":"sig"},{"text":"ok"}]}]})");
    auto rx = rt->run_stream_with_messages(prompt("hi"), {});
    auto evs = drain(rx);
    EXPECT_EQ(joined<llm::Thinking>(evs), "let me see");
    EXPECT_EQ(joined<llm::Text>(evs), "ok");
    const auto first_thinking = std::find_if(evs.begin(), evs.end(), [](const auto& e) {
        return std::holds_alternative<llm::Thinking>(e);
    });
    const auto first_text = std::find_if(
        evs.begin(), evs.end(), [](const auto& e) { return std::holds_alternative<llm::Text>(e); });
    EXPECT_LT(first_thinking, first_text);
}

TEST(Runtime, RunsARealToolAcrossTwoRounds) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"js({"rounds":[
             {"events":[{"text":"running"},
               {"tool_use":{"id":"t1","name":"bash",
                            "input":{"command":"echo tool-out-$((40+2))"}}}],
              "usage":{"input":1,"output":1}},
             {"events":[{"text":"the answer"}],"usage":{"input":2,"output":2}}]})js",
        config_with({"bash"}));
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    EXPECT_TRUE(all_of<session::Error>(evs).empty());
    EXPECT_EQ(joined<llm::ToolResultDelta>(evs), "tool-out-42\n");
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].tool_id, "t1");
    EXPECT_EQ(results[0].result, "tool-out-42\n");
    EXPECT_FALSE(results[0].is_error);
    EXPECT_EQ(joined<llm::Text>(evs), "runningthe answer");
    const auto hist = all_of<session::MessageHistory>(evs);
    ASSERT_EQ(hist.size(), 3U); // assistant, tool results, assistant
    const auto& last = *hist.back().messages;
    ASSERT_EQ(last.size(), 4U);
    EXPECT_EQ(last[2]->at("role"), "user");
    EXPECT_EQ(last[2]->at("content").as_array()[0].at("tool_use_id"), "t1");
    // The history is shared, never deep-copied: the earlier messages are the same objects.
    EXPECT_EQ((*hist[0].messages)[1].get(), last[1].get());
    const auto usage = all_of<session::Usage>(evs);
    ASSERT_EQ(usage.size(), 1U);
    EXPECT_EQ(usage[0].input, 3U);
}

TEST(Runtime, UnknownToolGivesAnErrorResultAndTheTurnGoesOn) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(io.executor(), R"({"rounds":[
        {"events":[{"tool_use":{"id":"t1","name":"bash","input":{"command":"true"}}}]},
        {"events":[{"text":"fine"}]}]})");
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_TRUE(results[0].is_error);
    EXPECT_NE(results[0].result.find("not enabled"), std::string::npos);
    EXPECT_EQ(joined<llm::Text>(evs), "fine");
}

TEST(Runtime, RoundLimitEndsWithErrorThenDone) {
    auto c = config_with({"echo"});
    c.max_rounds = 3;
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[{"events":[{"tool_use":{"name":"echo","input":{"text":"again"}}}]}]})",
        c);
    auto rx = rt->run_stream_with_messages(prompt("loop"), {});
    auto evs = drain(rx);
    EXPECT_EQ(all_of<llm::ToolResult>(evs).size(), 3U);
    ASSERT_GE(evs.size(), 2U);
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    const auto err = std::get_if<session::Error>(&evs[evs.size() - 2]);
    ASSERT_NE(err, nullptr);
    EXPECT_NE(err->message.find("round limit"), std::string::npos);
    EXPECT_EQ(err->outcome, session::Outcome::failed);
}

TEST(Runtime, ToolTimeoutKillsTheProcessAndReportsAnError) {
    auto c = config_with({"bash"});
    c.tool_timeout = 300ms;
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[
        {"events":[{"tool_use":{"id":"t1","name":"bash",
        "input":{"command":"echo started; sleep 30; echo never"}}}]},
        {"events":[{"text":"after"}]}]})",
        c);
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_TRUE(results[0].is_error);
    EXPECT_NE(results[0].result.find("started"), std::string::npos);
    EXPECT_NE(results[0].result.find("timed out"), std::string::npos);
    EXPECT_EQ(results[0].result.find("never"), std::string::npos);
    EXPECT_EQ(joined<llm::Text>(evs), "after");
}

TEST(Runtime, CapsToolOutputInDeltasAndResult) {
    auto c = config_with({"bash"});
    c.max_tool_output = 1000;
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[
        {"events":[{"tool_use":{"id":"t1","name":"bash",
        "input":{"command":"head -c 200000 /dev/zero | tr '\\0' a"}}}]},
        {"events":[{"text":"ok"}]}]})",
        c);
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    EXPECT_EQ(joined<llm::ToolResultDelta>(evs), std::string(1000, 'a'));
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].result.substr(0, 1000), std::string(1000, 'a'));
    EXPECT_NE(results[0].result.find("199000 bytes omitted"), std::string::npos);
    EXPECT_LT(results[0].result.size(), 1100U);
}

TEST(Runtime, RepairsToolOutputIntoValidUtf8AcrossChunks) {
    // "é" is split across two writes; 0xFF is never valid.
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"js({"rounds":[
        {"events":[{"tool_use":{"id":"t1","name":"bash",
          "input":{"command":"printf 'a\\303'; sleep 0.2; printf '\\251b\\377'"}}}]},
        {"events":[{"text":"ok"}]}]})js",
        config_with({"bash"}));
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    EXPECT_GE(all_of<llm::ToolResultDelta>(evs).size(), 2U);
    EXPECT_EQ(
        joined<llm::ToolResultDelta>(evs),
        "a\xC3\xA9"
        "b\xEF\xBF\xBD");
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(
        results[0].result,
        "a\xC3\xA9"
        "b\xEF\xBF\xBD");
}

TEST(Runtime, ProviderErrorEndsWithErrorThenDone) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[{"events":[{"text":"partial"},{"error":"upstream exploded"}]}]})");
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    auto evs = drain(rx);
    ASSERT_GE(evs.size(), 2U);
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    const auto* err = std::get_if<session::Error>(&evs[evs.size() - 2]);
    ASSERT_NE(err, nullptr);
    EXPECT_NE(err->message.find("upstream exploded"), std::string::npos);
    EXPECT_EQ(err->outcome, session::Outcome::failed);
}

TEST(Runtime, CancelledTokenEndsWithCancelledErrorThenDone) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(), R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    CancellationToken cancel;
    auto rx = rt->run_stream_with_messages(prompt("go"), cancel);
    ASSERT_TRUE(rx.next().has_value()); // it is streaming
    cancel.cancel();
    auto evs = drain(rx);
    ASSERT_GE(evs.size(), 2U);
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    const auto* err = std::get_if<session::Error>(&evs[evs.size() - 2]);
    ASSERT_NE(err, nullptr);
    EXPECT_EQ(err->outcome, session::Outcome::cancelled);
}

TEST(Runtime, DroppedReceiverEndsTheWorker) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(), R"({"rounds":[{"events":[{"text":"flood ","repeat":-1}]}]})");
    {
        auto rx = rt->run_stream_with_messages(prompt("go"), {});
        ASSERT_TRUE(rx.next().has_value());
    } // the caller goes away mid-flood
    EXPECT_TRUE(rt->wait_idle(10s));
}

TEST(Runtime, DroppedReceiverKillsTheToolProcess) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(),
        R"({"rounds":[
        {"events":[{"tool_use":{"id":"t1","name":"bash",
        "input":{"command":"echo $$; exec sleep 60"}}}]}]})",
        config_with({"bash"}));
    long pid = 0;
    {
        auto rx = rt->run_stream_with_messages(prompt("go"), {});
        while (auto ev = rx.next()) {
            if (const auto* d = std::get_if<llm::ToolResultDelta>(&*ev)) {
                pid = std::stol(d->delta);
                break;
            }
        }
    }
    ASSERT_GT(pid, 0);
    EXPECT_TRUE(rt->wait_idle(10s));
    // The tool reaped its child after killing it: the pid no longer exists.
    EXPECT_NE(::kill(static_cast<pid_t>(pid), 0), 0);
    EXPECT_EQ(errno, ESRCH);
}

TEST(Runtime, SecondTurnWhileOneRunsIsRefused) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(), R"({"delay_ms":5,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto rx1 = rt->run_stream_with_messages(prompt("one"), {});
    auto rx2 = rt->run_stream_with_messages(prompt("two"), {});
    auto evs = drain(rx2);
    ASSERT_EQ(evs.size(), 2U);
    EXPECT_TRUE(std::holds_alternative<session::Error>(evs[0]));
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs[1]));
}

TEST(Runtime, ANewTurnMayStartAsSoonAsDoneWasReceived) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(io.executor(), R"({"rounds":[{"events":[{"text":"ok"}]}]})");
    for (int i = 0; i < 50; ++i) {
        auto rx = rt->run_stream_with_messages(prompt("go"), {});
        auto evs = drain(rx);
        ASSERT_TRUE(all_of<session::Error>(evs).empty())
            << "turn " << i << ": " << all_of<session::Error>(evs)[0].message;
        EXPECT_EQ(joined<llm::Text>(evs), "ok");
    }
}

TEST(Runtime, DestructorCancelsARunningTurn) {
    sluice::test::IoThread io;
    auto rt = scripted_runtime(
        io.executor(), R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    ASSERT_TRUE(rx.next().has_value());
    rt.reset(); // cancels the turn, which ends on its executor
    auto evs = drain(rx);
    ASSERT_FALSE(evs.empty());
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
}

// Receives every event of `rx` with async_next, as a coroutine on `io` run to completion.
// `each` runs on every event as it arrives.
std::vector<StreamEvent> drain_async(
    boost::asio::io_context& io, RelayReceiver& rx, const std::function<void()>& each = {}) {
    return sluice::test::run_async(io, [&]() -> boost::asio::awaitable<std::vector<StreamEvent>> {
        std::vector<StreamEvent> out;
        const auto ex = co_await boost::asio::this_coro::executor;
        while (auto ev = co_await async_next(rx, ex, boost::asio::use_awaitable)) {
            if (each) {
                each();
            }
            out.push_back(std::move(*ev));
        }
        co_return out;
    });
}

// The variant name of each event, in order.
std::vector<std::string> kinds(const std::vector<StreamEvent>& evs) {
    std::vector<std::string> out;
    for (const auto& e : evs) {
        out.emplace_back(std::visit(
            [](const auto& v) -> std::string {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, llm::Text>) {
                    return "Text";
                }
                if constexpr (std::is_same_v<T, llm::ToolUseStart>) {
                    return "ToolUseStart";
                }
                if constexpr (std::is_same_v<T, llm::ToolUseDelta>) {
                    return "ToolUseDelta";
                }
                if constexpr (std::is_same_v<T, llm::ToolUse>) {
                    return "ToolUse";
                }
                if constexpr (std::is_same_v<T, llm::ToolResultDelta>) {
                    return "ToolResultDelta";
                }
                if constexpr (std::is_same_v<T, llm::ToolResult>) {
                    return "ToolResult";
                }
                if constexpr (std::is_same_v<T, session::MessageHistory>) {
                    return "MessageHistory";
                }
                if constexpr (std::is_same_v<T, session::Usage>) {
                    return "Usage";
                }
                if constexpr (std::is_same_v<T, session::Done>) {
                    return "Done";
                }
                if constexpr (std::is_same_v<T, session::Error>) {
                    return "Error";
                }
                return "other";
            },
            e));
    }
    return out;
}

constexpr std::string_view TOOL_TURN = R"({"rounds":[
    {"events":[{"text":"let me echo"},{"tool_use":{"id":"t1","name":"echo","input":{"text":"hi"}}}],
    "usage":{"input":1,"output":2}},
    {"events":[{"text":"done"}],"usage":{"input":3,"output":4}}]})";

TEST(Runtime, RunsAWholeTurnWithAToolOnAOneThreadIoContext) {
    // The turn, the scripted provider's pacing and the tool all run as coroutines on the
    // test's own thread; the caller receives with async_next on the same io_context.
    boost::asio::io_context io;
    auto rt = scripted_runtime(io.get_executor(), TOOL_TURN, config_with({"echo"}));
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    const auto evs = drain_async(io, rx);
    const std::vector<std::string> expected{
        "Text",
        "ToolUseStart",
        "ToolUseDelta",
        "ToolUse",
        "MessageHistory", // round 1
        "ToolResultDelta",
        "ToolResult",
        "MessageHistory", // the tool
        "Text",
        "MessageHistory", // round 2
        "Usage",
        "Done"};
    EXPECT_EQ(kinds(evs), expected);
    EXPECT_EQ(joined<llm::Text>(evs), "let me echodone");
    const auto results = all_of<llm::ToolResult>(evs);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].result, "hi");
    EXPECT_EQ(all_of<session::Usage>(evs).at(0).output, 6U);
    EXPECT_TRUE(rt->wait_idle(0ms));

    // The same turn read the old way (blocking next() on a plain thread, the turn on an
    // io_context thread) gives the same sequence.
    sluice::test::IoThread other;
    auto rt2 = scripted_runtime(other.executor(), TOOL_TURN, config_with({"echo"}));
    auto rx2 = rt2->run_stream_with_messages(prompt("go"), {});
    EXPECT_EQ(kinds(drain(rx2)), expected);
}

TEST(Runtime, RunsATurnOnAStrand) {
    // A seat passes its strand: the same turn, its provider and tool run on it.
    boost::asio::io_context io;
    auto rt = scripted_runtime(
        boost::asio::make_strand(io.get_executor()), TOOL_TURN, config_with({"echo"}));
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    const auto evs = drain_async(io, rx);
    EXPECT_EQ(kinds(evs).size(), 12U);
    EXPECT_EQ(joined<llm::Text>(evs), "let me echodone");
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
}

std::size_t thread_count() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
        ++n;
    }
    return n;
}

TEST(Runtime, ABuiltinTurnCreatesNoThread) {
    // The default configuration: the scripted provider at its built-in script, paced, with its
    // echo tool. Sampled on every event and at the end: the thread count never grows.
    RuntimeConfig c;
    c.provider.script_pace = 0.1;
    boost::asio::io_context io;
    const std::size_t before = thread_count();
    Runtime rt(io.get_executor(), c);
    auto rx = rt.run_stream_with_messages(prompt("hi"), {});
    std::size_t most = thread_count();
    const auto evs = drain_async(io, rx, [&] { most = std::max(most, thread_count()); });
    EXPECT_TRUE(all_of<session::Error>(evs).empty());
    EXPECT_EQ(all_of<llm::ToolResult>(evs).size(), 1U); // the turn did run its tool
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    EXPECT_EQ(most, before);
    EXPECT_EQ(thread_count(), before);
}

TEST(Runtime, DestructorCancelsWithoutWaitingAndTheTurnEndsOnItsExecutor) {
    boost::asio::io_context io;
    auto rt = scripted_runtime(
        io.get_executor(), R"({"delay_ms":1,"rounds":[{"events":[{"text":"x","repeat":-1}]}]})");
    auto rx = rt->run_stream_with_messages(prompt("go"), {});
    std::size_t seen = 0;
    std::vector<StreamEvent> evs = drain_async(io, rx, [&] {
        if (++seen == 3) {
            rt.reset(); // on the executor's own thread: must not wait for the turn
        }
    });
    ASSERT_FALSE(evs.empty());
    EXPECT_TRUE(std::holds_alternative<session::Done>(evs.back()));
    const auto* err = std::get_if<session::Error>(&evs[evs.size() - 2]);
    ASSERT_NE(err, nullptr);
    EXPECT_EQ(err->outcome, session::Outcome::cancelled);
}

TEST(RepairHistory, AnswersDanglingToolUsesAndMergesRoles) {
    std::vector<json::value> msgs{
        json::object{{"role", "user"}, {"content", "a"}},
        json::object{{"role", "user"}, {"content", "b"}},
        json::object{
            {"role", "assistant"},
            {"content",
             json::array{json::object{
                 {"type", "tool_use"},
                 {"id", "t9"},
                 {"name", "bash"},
                 {"input", json::object{}}}}}},
        json::object{{"role", "user"}, {"content", "next prompt"}}};
    auto out = repair_history(std::move(msgs));
    ASSERT_EQ(out.size(), 3U);
    EXPECT_EQ(out[0].at("content").as_array().size(), 2U);
    const auto& fixed = out[2].at("content").as_array();
    ASSERT_EQ(fixed.size(), 2U);
    EXPECT_EQ(fixed[0].at("type"), "tool_result");
    EXPECT_EQ(fixed[0].at("tool_use_id"), "t9");
    EXPECT_EQ(fixed[0].at("is_error"), true);
    EXPECT_EQ(fixed[1].at("text"), "next prompt");
}

} // namespace
} // namespace sluice::runtime
