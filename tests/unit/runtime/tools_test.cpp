// Tests of the built-in tools: bash (working dir, exit status, cancel), read_file, echo, lists.
#include <sluice/runtime/tools.hpp>

#include "support/run_async.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

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

// TEMP(helper B replaces): runs the awaitable Tool::run to completion on its own io_context.
ToolOutcome run_tool(Tool& tool, json::value input, ToolContext ctx) {
    boost::asio::io_context io;
    return sluice::test::run_async(io, [&] { return tool.run(std::move(input), std::move(ctx)); });
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
    auto out = run_tool(*bash, json::object{{"command", "pwd; echo err >&2"}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output, fs::canonical(dir.path).string() + "\nerr\n");
    EXPECT_EQ(streamed, out.output);
}

TEST(BashTool, NonZeroExitIsAnError) {
    auto bash = make_bash_tool({"."});
    auto out = run_tool(*bash, json::object{{"command", "echo oops; exit 7"}}, ToolContext{});
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("oops"), std::string::npos);
    EXPECT_NE(out.output.find("exit status 7"), std::string::npos);
}

TEST(BashTool, MissingCommandIsAnError) {
    auto out = run_tool(*make_bash_tool({"."}), json::object{}, ToolContext{});
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
    auto out = run_tool(*bash, json::object{{"command", "sleep 60 & echo $!; wait"}}, ctx);
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(out.output.find("cancelled"), std::string::npos);
    const long pid = std::stol(streamed);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
        // The grandchild was reparented (not our child): wait for init to reap it.
        gone = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
        if (!gone) {
            std::this_thread::sleep_for(10ms);
        }
    }
    EXPECT_TRUE(gone);
}

TEST(BashTool, ReturnsWhenTheShellExitsEvenIfABackgroundJobHoldsThePipe) {
    auto bash = make_bash_tool({"."});
    ToolContext ctx;
    ctx.timeout = 20s;
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run_tool(*bash, json::object{{"command", "sleep 3 & echo quick"}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output.substr(0, 6), "quick\n");
    // Not a speed assertion: the tool must not wait out the 20 s timeout.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
}

TEST(ReadFileTool, ReadsBoundedWithOffset) {
    TempDir dir;
    {
        std::ofstream(dir.path / "f.txt") << "0123456789";
    }
    auto rf = make_read_file_tool({dir.path.string()});
    ToolContext ctx;
    ctx.max_output = 4;
    auto out = run_tool(*rf, json::object{{"path", "f.txt"}, {"offset", 2}}, ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_EQ(out.output.substr(0, 4), "2345");
    EXPECT_NE(out.output.find("4 more bytes"), std::string::npos);
    auto whole = run_tool(*rf, json::object{{"path", (dir.path / "f.txt").string()}}, ToolContext{});
    EXPECT_EQ(whole.output, "0123456789");
}

TEST(ReadFileTool, MissingFileAndDirectoriesAreErrors) {
    TempDir dir;
    auto rf = make_read_file_tool({dir.path.string()});
    EXPECT_TRUE(run_tool(*rf, json::object{{"path", "nope"}}, ToolContext{}).is_error);
    EXPECT_TRUE(run_tool(*rf, json::object{{"path", "."}}, ToolContext{}).is_error);
    EXPECT_TRUE(run_tool(*rf, json::object{}, ToolContext{}).is_error);
}

TEST(EchoTool, ReturnsItsText) {
    auto out = run_tool(*make_echo_tool(), json::object{{"text", "hi"}}, ToolContext{});
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
