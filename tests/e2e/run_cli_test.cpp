// End-to-end tests of `sluice run`: the real binary, stream-json rows on stdout, errors, EPIPE.
#include "support/files.hpp"
#include "support/stub_provider.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

struct TempDir {
    fs::path path;

    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "sluice-run-XXXXXX").string();
        path = ::mkdtemp(tmpl.data());
    }

    ~TempDir() { fs::remove_all(path); }

    [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
};

using sluice::test::slurp;

// Runs a bash command line; returns its exit status.
int shell(const std::string& cmd) {
    const int st = std::system(("bash -c '" + cmd + "'").c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct RunResult {
    int status{-1};
    std::vector<json::object> rows;
    std::string err;
};

// `<env> sluice run <args>` with stdout and stderr captured, bounded by a 60 s timeout.
RunResult run_sluice_env(const TempDir& dir, const std::string& env, const std::string& args) {
    RunResult r;
    r.status = shell(
        env + " timeout 60 " SLUICE_BINARY " run " + args + " >" + dir.file("out") + " 2>"
        + dir.file("err"));
    std::istringstream lines(slurp(dir.file("out")));
    std::string line;
    while (std::getline(lines, line)) {
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        EXPECT_FALSE(ec) << "not JSON: " << line;
        if (!ec) {
            EXPECT_TRUE(v.is_object());
            r.rows.push_back(v.as_object());
        }
    }
    r.err = slurp(dir.file("err"));
    return r;
}

RunResult run_sluice(const TempDir& dir, const std::string& args) {
    return run_sluice_env(dir, "", args);
}

std::vector<std::string> frame_types(const RunResult& r) {
    std::vector<std::string> out;
    for (const auto& row : r.rows) {
        if (row.at("type") != "stream_event") {
            out.emplace_back(row.at("type").as_string());
        }
    }
    return out;
}

TEST(RunCommand, WritesTheScriptedTurnAsStreamJson) {
    TempDir dir;
    auto r = run_sluice(dir, "--pace 0 --tools bash \"say hi\"");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(
        frame_types(r),
        (std::vector<std::string>{"system", "assistant", "user", "assistant", "result"}));
    ASSERT_FALSE(r.rows.empty());
    EXPECT_EQ(r.rows.back().at("type"), "result");
    EXPECT_EQ(r.rows.back().at("subtype"), "success");
    bool text = false;
    bool thinking = false;
    bool input = false;
    bool tool_output = false;
    for (const auto& row : r.rows) {
        if (row.at("type") != "stream_event") {
            continue;
        }
        const auto& ev = row.at("event").as_object();
        if (ev.at("type") == "tool_result_delta") {
            tool_output = tool_output
                          || ev.at("delta").at("text").as_string().find("hello from the bash tool")
                                 != json::string::npos;
            continue;
        }
        if (ev.at("type") != "content_block_delta") {
            continue;
        }
        const auto& type = ev.at("delta").at("type");
        text = text || type == "text_delta";
        thinking = thinking || type == "thinking_delta";
        input = input || type == "input_json_delta";
    }
    EXPECT_TRUE(text);
    EXPECT_TRUE(thinking);
    EXPECT_TRUE(input);
    EXPECT_TRUE(tool_output);
}

TEST(RunCommand, HostsAnAgentCommand) {
    TempDir dir;
    const auto fake =
        (fs::path(__FILE__).parent_path() / "../support/fake_agent.py").lexically_normal().string();
    auto r = run_sluice(dir, "--agent-cmd \"python3 " + fake + "\" tool");
    EXPECT_EQ(r.status, 0) << r.err;
    ASSERT_FALSE(r.rows.empty());
    EXPECT_EQ(r.rows.back().at("type"), "result");
    EXPECT_EQ(r.rows.back().at("result"), "two files");
}

TEST(RunCommand, ProviderErrorIsOneLineOnStderrAndAFailureStatus) {
    TempDir dir;
    std::ofstream(dir.file("script.json"))
        << R"({"rounds":[{"events":[{"error":"model claude-nope not found"}]}]})";
    auto r = run_sluice(dir, "--pace 0 --script " + dir.file("script.json") + " hi");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("model claude-nope not found"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    ASSERT_FALSE(r.rows.empty());
    EXPECT_EQ(r.rows.back().at("is_error"), true);
}

TEST(RunCommand, BadSettingsFailWithAClearMessage) {
    TempDir dir;
    auto r = run_sluice(dir, "--tools nonsense hi");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("unknown tool"), std::string::npos) << r.err;
}

TEST(RunCommand, ExitsWhenTheReaderGoesAway) {
    TempDir dir;
    // An endless flood: only the reader going away (EPIPE) can end it.
    std::ofstream(dir.file("flood.json"))
        << R"({"rounds":[{"events":[{"text":"flood flood flood ","repeat":-1}]}]})";
    const int rc = shell(
        "timeout 30 " SLUICE_BINARY " run --pace 0 --script " + dir.file("flood.json") + " go 2>"
        + dir.file("err") + " | head -c 100000 >/dev/null; echo ${PIPESTATUS[0]} >"
        + dir.file("status"));
    EXPECT_EQ(rc, 0);
    const auto status = slurp(dir.file("status"));
    EXPECT_NE(status, "124\n") << "sluice did not exit after its reader went away";
    EXPECT_NE(status, "0\n");
    EXPECT_NE(slurp(dir.file("err")).find("stdout was closed"), std::string::npos);
}

// ---- against the anthropic provider and a loopback stub ----

using sluice::test::StubFlood;
using sluice::test::StubProvider;
using sluice::test::StubResponse;

std::string anthropic_args(const std::string& base_url) {
    return "--provider anthropic --model claude-test --base-url " + base_url;
}

RunResult run_anthropic(const TempDir& dir, const std::string& base_url) {
    return run_sluice_env(dir, "ANTHROPIC_API_KEY=test-key", anthropic_args(base_url) + " hi");
}

void expect_one_line_error(const RunResult& r, std::string_view needle) {
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

StubResponse error_response(unsigned status, std::string_view type, std::string_view message) {
    StubResponse r;
    r.status = status;
    r.content_type = "application/json";
    r.body = R"({"type":"error","error":{"type":")" + std::string(type) + R"(","message":")"
             + std::string(message) + R"("}})";
    return r;
}

TEST(RunCommand, UnreachableProviderIsOneLineOnStderr) {
    TempDir dir;
    auto r = run_anthropic(dir, "http://127.0.0.1:1");
    expect_one_line_error(r, "anthropic");
}

TEST(RunCommand, UnauthorizedIsOneLineOnStderr) {
    TempDir dir;
    StubProvider stub;
    stub.enqueue(error_response(401, "authentication_error", "invalid x-api-key"));
    auto r = run_anthropic(dir, stub.base_url());
    expect_one_line_error(r, "invalid x-api-key");
}

TEST(RunCommand, UnknownModelIsOneLineOnStderr) {
    TempDir dir;
    StubProvider stub;
    stub.enqueue(error_response(404, "not_found_error", "model: claude-test"));
    auto r = run_anthropic(dir, stub.base_url());
    expect_one_line_error(r, "claude-test");
}

TEST(RunCommand, MalformedStreamIsOneLineOnStderr) {
    TempDir dir;
    StubProvider stub;
    StubResponse bad;
    bad.body = "event: message_start\ndata: {this is not json\n\n";
    stub.enqueue(bad);
    auto r = run_anthropic(dir, stub.base_url());
    expect_one_line_error(r, "anthropic");
}

TEST(RunCommand, ReaderGoingAwayClosesTheProviderStream) {
    TempDir dir;
    StubProvider stub;
    StubResponse flood;
    flood.flood = StubFlood::anthropic;
    flood.flood_delta_bytes = 512;
    stub.enqueue(flood);
    const int rc = shell(
        "ANTHROPIC_API_KEY=test-key timeout 30 " SLUICE_BINARY " run "
        + anthropic_args(stub.base_url()) + " go 2>" + dir.file("err")
        + " | head -c 200000 >/dev/null; echo ${PIPESTATUS[0]} >" + dir.file("status"));
    EXPECT_EQ(rc, 0);
    const auto status = slurp(dir.file("status"));
    EXPECT_NE(status, "124\n") << "sluice did not exit after its reader went away";
    EXPECT_NE(status, "0\n");
    EXPECT_TRUE(stub.wait_closed_by_client(1, std::chrono::seconds(10)));
}

} // namespace
