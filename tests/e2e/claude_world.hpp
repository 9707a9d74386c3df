// Support for the claude agent kind's end-to-end tests (claude_test.cpp, claude_reset_test.cpp):
// the pinned Claude Code CLI behind a wrapper, the scripted fake Anthropic API
// (tests/support/fake_anthropic.py), and a claude seat's world of folders.
#pragma once

#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace sluice::test::claude_e2e {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Absolute: the wrapper script runs claude from the seat's cwd.
inline const fs::path SOURCE_ROOT =
    fs::absolute(fs::path(__FILE__).parent_path().parent_path().parent_path()).lexically_normal();
inline const fs::path SUPPORT = SOURCE_ROOT / "tests" / "support";
inline const fs::path CLAUDE =
    SOURCE_ROOT / "tools" / "claude-code" / "node_modules" / ".bin" / "claude";

// Skips the test when the pinned Claude Code is not installed.
#define SLUICE_NEED_CLAUDE()                                                                       \
    do {                                                                                           \
        if (!std::filesystem::exists(CLAUDE)) {                                                    \
            GTEST_SKIP() << "Claude Code is not installed at " << CLAUDE.string()                  \
                         << " (scripts/install-deps installs it)";                                 \
        }                                                                                          \
    } while (false)

// The loopback fake Anthropic API, scripted; stopped (SIGTERM) and reaped by the destructor.
class FakeAnthropic {
public:
    FakeAnthropic(const TempDir& dir, const json::value& script)
        : record_(dir.file("requests.jsonl")) {
        const auto script_file = dir.file("script.json");
        std::ofstream(script_file) << json::serialize(script);
        const auto port_file = dir.file("fake.port");
        pid_ = ::fork();
        if (pid_ == 0) {
            const std::string fake = (SUPPORT / "fake_anthropic.py").string();
            ::execlp(
                "python3",
                "python3",
                fake.c_str(),
                "--script",
                script_file.c_str(),
                "--record",
                record_.c_str(),
                "--port-file",
                port_file.c_str(),
                static_cast<char*>(nullptr));
            ::_exit(127);
        }
        for (int i = 0; i < 200 && !fs::exists(port_file); ++i) {
            std::this_thread::sleep_for(50ms);
        }
        port_ = slurp(port_file);
    }

    ~FakeAnthropic() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int st = 0;
            ::waitpid(pid_, &st, 0);
        }
    }

    FakeAnthropic(const FakeAnthropic&) = delete;
    FakeAnthropic& operator=(const FakeAnthropic&) = delete;

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + port_; }

    // Every Messages request body recorded so far.
    [[nodiscard]] std::vector<json::value> requests() const {
        std::vector<json::value> out;
        std::istringstream in(slurp(record_));
        for (std::string line; std::getline(in, line);) {
            auto v = json::parse(line);
            if (v.at("path").as_string().starts_with("/v1/messages")) {
                out.push_back(v.at("body"));
            }
        }
        return out;
    }

private:
    std::string record_;
    pid_t pid_{-1};
    std::string port_;
};

// A wrapper for the pinned claude with the test's environment: the fake API, a throw-away
// HOME, no nonessential traffic, a dummy key. Returns its path.
inline std::string claude_wrapper(const TempDir& dir, const FakeAnthropic& fake) {
    const auto home = dir.file("home");
    fs::create_directories(home);
    const auto path = dir.file("claude.sh");
    std::ofstream(path) << "#!/bin/sh\n"
                        << "export HOME='" << home << "' ANTHROPIC_BASE_URL='" << fake.url()
                        << "' ANTHROPIC_API_KEY=sk-ant-test-dummy"
                        << " CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1\n"
                        << "unset ANTHROPIC_AUTH_TOKEN CLAUDECODE CLAUDE_CODE_ENTRYPOINT\n"
                        << "exec '" << CLAUDE.string() << "' \"$@\"\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
}

inline json::value script_for(const fs::path& cwd) {
    return json::parse(
        R"({"rules":[
        {"prompt":"make file","reply":[{"text":"Running it."},
            {"tool_use":{"name":"Bash","input":{"command":"touch )"
        + (cwd / "made.txt").string()
        + R"(","description":"Create made.txt"}}}]},
        {"tool_result":"","reply":[{"text":"The command finished."}]},
        {"prompt":"slow","delay_ms":150,"reply":[{"thinking":"let me think about this"},
            {"text":"one two three four five six seven eight nine ten eleven twelve thirteen )"
          R"(fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo )"
          R"(twentythree twentyfour twentyfive twentysix twentyseven twentyeight"}]},
        {"prompt":"think","reply":[{"thinking":"pondering hello"},{"text":"Hello from the fake."}]}
        ]})");
}

inline std::vector<std::string> serve_args(
    const TempDir& data,
    const std::string& claude,
    const std::string& root,
    std::vector<std::string> extra = {}) {
    std::vector<std::string> a{
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        data.path(),
        "--claude-bin",
        claude,
        "--workspace-root",
        root};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// Frames of `events` that are system rows of `subtype`.
inline std::vector<json::value>
system_rows(const std::vector<sluice::sse::Event>& events, std::string_view subtype) {
    std::vector<json::value> out;
    for (auto& [seq, row] : frames_of(events)) {
        const auto& o = row.as_object();
        if (o.at("type") == "system" && o.contains("subtype") && o.at("subtype").is_string()
            && o.at("subtype").get_string() == subtype) {
            out.push_back(row);
        }
    }
    return out;
}

// All assistant text of `events`' frames.
inline std::string assistant_text(const std::vector<sluice::sse::Event>& events) {
    std::string out;
    for (auto& [seq, row] : frames_of(events)) {
        if (row.at("type") != "assistant") {
            continue;
        }
        for (const auto& b : row.at("message").at("content").as_array()) {
            if (b.at("type") == "text") {
                out += std::string(b.at("text").as_string()) + "\n";
            }
        }
    }
    return out;
}

inline auto ended(std::uint64_t turn, const char* state = "ended") {
    return [turn, state](const std::vector<sluice::sse::Event>& ev) {
        return has_turn_state(ev, turn, state);
    };
}

// A claude seat's world: a workspace root with `work` in it, the fake API scripted for that
// folder, the wrapper running the pinned CLI against it, and the hub's data dir.
struct ClaudeWorld {
    TempDir dir;
    fs::path root = dir.file("root");
    fs::path cwd = made_dir(root / "work");
    FakeAnthropic fake{dir, script_for(cwd)};
    std::string claude = claude_wrapper(dir, fake);
    TempDir data;

    static fs::path made_dir(fs::path p) {
        fs::create_directories(p);
        return p;
    }
};

} // namespace sluice::test::claude_e2e
