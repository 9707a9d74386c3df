// Tests of the built-in tools: bash (working dir, exit status, cancel), read_file, echo, lists.
#include "support/io_loop.hpp"

#include <sluice/runtime/tools/tools.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Runs one tool call on a single-threaded io_context driven by this thread.
ToolOutcome run(Tool& tool, json::value input, ToolContext ctx = {}) {
    test::IoLoop loop;
    return loop.run(tool.run(std::move(input), std::move(ctx)));
}

// Whether `pid` is gone (not even a zombie), waiting up to 2 s for init to reap it.
bool gone_soon(long pid) {
    for (int i = 0; i < 200; ++i) {
        // The grandchild was reparented (not our child): wait for init to reap it.
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            return true;
        }
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

struct TempDir {
    fs::path path;

    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "sluice-tools-XXXXXX").string();
        path = ::mkdtemp(tmpl.data());
    }

    ~TempDir() { fs::remove_all(path); }
};

TEST(BashTool, RunsInTheWorkingDirectoryAndStreamsOutput) {
    TempDir dir;
    auto bash = make_bash_tool({dir.path.string()});
    std::string streamed;
    ToolContext ctx;
    ctx.on_output = [&](std::string_view s) { streamed.append(s); };
    auto out = run(*bash, json::object{{"command", "pwd; echo err >&2"}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output, fs::canonical(dir.path).string() + "\nerr\n");
    EXPECT_EQ(streamed, out.output);
}

TEST(BashTool, NonZeroExitIsAnError) {
    auto bash = make_bash_tool({"."});
    auto out = run(*bash, json::object{{"command", "echo oops; exit 7"}}, ToolContext{});
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("oops"), std::string::npos);
    EXPECT_NE(out.output.find("exit status 7"), std::string::npos);
}

TEST(BashTool, MissingCommandIsAnError) {
    auto out = run(*make_bash_tool({"."}), json::object{});
    EXPECT_TRUE(out.is_error);
}

TEST(BashTool, CancelKillsTheWholeProcessGroup) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    std::string streamed;
    ctx.on_output = [&](std::string_view s) {
        streamed.append(s);
        ctx.cancel.cancel(); // cancel as soon as the background pid is known
    };
    // A background grandchild in the same group must die too.
    auto out = run(*bash, json::object{{"command", "sleep 60 & echo $!; wait"}}, ctx);
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("cancelled"), std::string::npos);
    const long pid = std::stol(streamed);
    EXPECT_TRUE(gone_soon(pid));
}

TEST(BashTool, ACancelFromAnotherThreadKillsTheProcessGroupPromptly) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    ctx.timeout = 120s;
    std::atomic<long> pid{0};
    std::string streamed;
    ctx.on_output = [&](std::string_view s) {
        streamed.append(s);
        if (streamed.find('\n') != std::string::npos) {
            pid = std::stol(streamed);
        }
    };
    std::thread canceller([&, token = ctx.cancel]() mutable {
        while (pid == 0) {
            std::this_thread::sleep_for(1ms);
        }
        token.cancel();
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run(*bash, json::object{{"command", "sleep 60 & echo $!; wait"}}, ctx);
    const auto took = std::chrono::steady_clock::now() - t0;
    canceller.join();
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("cancelled; process group killed"), std::string::npos) << out.output;
    // Not a speed assertion: far below the 60 s sleep and the 120 s timeout.
    EXPECT_LT(took, 30s);
    EXPECT_TRUE(gone_soon(pid));
}

TEST(BashTool, TimesOutAndKillsTheProcessGroup) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    ctx.timeout = 200ms;
    std::string streamed;
    ctx.on_output = [&](std::string_view s) { streamed.append(s); };
    auto out = run(*bash, json::object{{"command", "sleep 60 & echo $!; wait"}}, ctx);
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("timed out after 200 ms"), std::string::npos) << out.output;
    EXPECT_TRUE(gone_soon(std::stol(streamed)));
}

TEST(BashTool, OutputIsCappedAndTheCutReported) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    ctx.max_output = 10;
    std::string streamed;
    ctx.on_output = [&](std::string_view s) { streamed.append(s); };
    auto out = run(*bash, json::object{{"command", "printf 0123456789abcdef"}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(streamed, "0123456789");
    EXPECT_EQ(out.output.substr(0, 10), "0123456789");
    EXPECT_NE(out.output.find("6 bytes omitted"), std::string::npos) << out.output;
}

TEST(BashTool, RunsConcurrentlyWithAnotherToolOnOneThread) {
    // On one single-threaded io_context, `a` waits for a file that only `b` creates: a tool run
    // that blocked the thread would leave `a` to time out.
    TempDir dir;
    auto bash = make_bash_tool({dir.path.string()});
    test::IoLoop loop;
    ToolContext slow;
    slow.timeout = 10s;
    const json::object wait_for_flag{
        {"command", "while [ ! -e flag ]; do sleep 0.01; done; echo a"}};
    auto a = boost::asio::co_spawn(
        loop.context(), bash->run(wait_for_flag, slow), boost::asio::use_future);
    auto b = boost::asio::co_spawn(
        loop.context(),
        bash->run(json::object{{"command", "touch flag; echo b"}}, {}),
        boost::asio::use_future);
    const auto ready = [](auto& f) { return f.wait_for(0s) == std::future_status::ready; };
    ASSERT_TRUE(loop.until([&] { return ready(a) && ready(b); }));
    const auto ra = a.get();
    EXPECT_FALSE(ra.is_error) << ra.output;
    EXPECT_EQ(ra.output, "a\n");
    EXPECT_EQ(b.get().output, "b\n");
}

TEST(BashTool, ReturnsWhenTheShellExitsEvenIfABackgroundJobHoldsThePipe) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    ctx.timeout = 20s;
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run(*bash, json::object{{"command", "sleep 3 & echo quick"}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output.substr(0, 6), "quick\n");
    // Not a speed assertion: the tool must not wait out the 20 s timeout.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
}

TEST(ReadFileTool, ReadsBoundedWithOffset) {
    TempDir dir;
    { std::ofstream(dir.path / "f.txt") << "0123456789"; }
    auto rf = make_read_file_tool({dir.path.string()});
    ToolContext ctx;
    ctx.max_output = 4;
    auto out = run(*rf, json::object{{"path", "f.txt"}, {"offset", 2}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output.substr(0, 4), "2345");
    EXPECT_NE(out.output.find("4 more bytes"), std::string::npos);
    auto whole = run(*rf, json::object{{"path", (dir.path / "f.txt").string()}}, ToolContext{});
    EXPECT_EQ(whole.output, "0123456789");
}

TEST(ReadFileTool, MissingFileAndDirectoriesAreErrors) {
    TempDir dir;
    auto rf = make_read_file_tool({dir.path.string()});
    EXPECT_TRUE(run(*rf, json::object{{"path", "nope"}}, ToolContext{}).is_error);
    EXPECT_TRUE(run(*rf, json::object{{"path", "."}}, ToolContext{}).is_error);
    EXPECT_TRUE(run(*rf, json::object{}, ToolContext{}).is_error);
}

TEST(EchoTool, ReturnsItsText) {
    auto out = run(*make_echo_tool(), json::object{{"text", "hi"}});
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output, "hi");
}

TEST(MakeTools, BuildsNamedToolsAndRejectsUnknownOnes) {
    auto tools = make_tools(split_tool_list(" bash, read_file,,echo "), {});
    ASSERT_EQ(tools.size(), 3U);
    EXPECT_EQ(tools[0]->spec().name, "bash");
    EXPECT_EQ(tools[1]->spec().name, "read_file");
    EXPECT_EQ(tools[2]->spec().name, "echo");
    EXPECT_TRUE(tools[0]->spec().input_schema.is_object());
    EXPECT_THROW((void)make_tools({"rm_rf"}, {}), std::invalid_argument);
}

} // namespace
} // namespace sluice::runtime
