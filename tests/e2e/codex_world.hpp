// Support for the codex agent kind's end-to-end tests (codex_test.cpp): the pinned Codex CLI
// (tools/codex) behind a wrapper with a scratch CODEX_HOME whose model provider is the loopback
// fake of the Responses API (tests/support/fake_responses.py).
#pragma once

#include "e2e/claude_world.hpp"

namespace sluice::test::codex_e2e {

using claude_e2e::ended;
using claude_e2e::SOURCE_ROOT;
using claude_e2e::SUPPORT;
using claude_e2e::system_rows;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline const fs::path CODEX = SOURCE_ROOT / "tools" / "codex" / "node_modules" / ".bin" / "codex";

// Skips the test when the pinned Codex is not installed.
#define SLUICE_NEED_CODEX()                                                                        \
    do {                                                                                           \
        if (!std::filesystem::exists(CODEX)) {                                                     \
            GTEST_SKIP() << "Codex is not installed at " << CODEX.string()                         \
                         << " (scripts/install-deps installs it)";                                 \
        }                                                                                          \
    } while (false)

// The loopback fake Responses API; stopped (SIGTERM) and reaped by the destructor.
class FakeResponses {
public:
    explicit FakeResponses(const TempDir& dir)
        : record_(dir.file("responses.jsonl")) {
        const auto port_file = dir.file("responses.port");
        pid_ = ::fork();
        if (pid_ == 0) {
            const std::string fake = (SUPPORT / "fake_responses.py").string();
            ::execlp(
                "python3",
                "python3",
                fake.c_str(),
                "--record",
                record_.c_str(),
                "--port-file",
                port_file.c_str(),
                static_cast<char*>(nullptr));
            ::_exit(127);
        }
        for (int i = 0; i < 200 && slurp(port_file).empty(); ++i) {
            std::this_thread::sleep_for(50ms);
        }
        port_ = slurp(port_file);
        while (!port_.empty() && (port_.back() == '\n' || port_.back() == ' ')) {
            port_.pop_back();
        }
    }

    ~FakeResponses() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int st = 0;
            ::waitpid(pid_, &st, 0);
        }
    }

    FakeResponses(const FakeResponses&) = delete;
    FakeResponses& operator=(const FakeResponses&) = delete;

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + port_ + "/v1"; }

    // Every Responses request body recorded so far.
    [[nodiscard]] std::vector<json::value> requests() const {
        std::vector<json::value> out;
        std::istringstream in(slurp(record_));
        for (std::string line; std::getline(in, line);) {
            auto v = json::parse(line);
            if (v.at("path").as_string().ends_with("/responses")) {
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

// A codex seat's world: a workspace root with `work` in it, the fake API, a CODEX_HOME whose
// config.toml points at it (approval policy on-request), a wrapper running the pinned CLI in
// that environment, and the hub's data dir. The wrapper writes its pid (codex's, it execs) to
// `pid_file`, and when `garbage_file` exists it deletes it and first writes a line that is not
// JSON to stdout.
struct CodexWorld {
    TempDir dir;
    fs::path root = made(dir.file("root"));
    fs::path cwd = made(root / "work");
    fs::path home = made(dir.file("codex-home"));
    FakeResponses fake{dir};
    std::string pid_file = dir.file("codex.pid");
    std::string garbage_file = dir.file("garbage.once");
    std::string codex = wrapper();
    TempDir data;

    static fs::path made(fs::path p) {
        fs::create_directories(p);
        return p;
    }

    [[nodiscard]] std::vector<std::string> serve_args(std::vector<std::string> extra = {}) const {
        std::vector<std::string> a{
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data",
            data.path(),
            "--codex-bin",
            codex,
            "--workspace-root",
            root.string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }

    // The running codex's pid (0 when none was started yet).
    [[nodiscard]] long pid() const {
        const auto s = slurp(pid_file);
        return s.empty() ? 0 : std::stol(s);
    }

private:
    std::string wrapper() {
        std::ofstream(home / "config.toml") << "model = \"gpt-5.1-codex\"\n"
                                            << "model_provider = \"fake\"\n"
                                            << "approval_policy = \"on-request\"\n"
                                            << "sandbox_mode = \"workspace-write\"\n"
                                            << "check_for_update_on_startup = false\n\n"
                                            << "[model_providers.fake]\n"
                                            << "name = \"Fake Responses\"\n"
                                            << "base_url = \"" << fake.url() << "\"\n"
                                            << "env_key = \"FAKE_OPENAI_KEY\"\n"
                                            << "wire_api = \"responses\"\n"
                                            << "request_max_retries = 0\n"
                                            << "stream_max_retries = 0\n"
                                            << "stream_idle_timeout_ms = 20000\n\n"
                                            << "[analytics]\nenabled = false\n";
        const auto path = dir.file("codex.sh");
        std::ofstream(path) << "#!/bin/sh\n"
                            << "export CODEX_HOME='" << home.string()
                            << "' FAKE_OPENAI_KEY=dummy RUST_LOG=warn NO_COLOR=1\n"
                            << "echo $$ > '" << pid_file << "'\n"
                            << "if [ -e '" << garbage_file << "' ]; then rm -f '" << garbage_file
                            << "'; echo 'this is not json'; fi\n"
                            << "exec '" << CODEX.string() << "' \"$@\"\n";
        fs::permissions(path, fs::perms::owner_all);
        return path;
    }
};

// Whether a preview of `events`, from the `from`th event on, carries answer text.
inline bool
text_preview_since(const std::vector<sluice::sse::Event>& events, std::size_t from = 0) {
    return std::any_of(
        events.begin() + static_cast<std::ptrdiff_t>(std::min(from, events.size())),
        events.end(),
        [](const auto& e) {
            return e.type == "preview" && e.data.find("\"text\"") != std::string::npos;
        });
}

// A wait condition (SseClient::wait_for): answer text previewed after the first `n` events.
inline auto text_preview_after(std::size_t n) {
    return [n](const std::vector<sluice::sse::Event>& events) {
        return text_preview_since(events, n);
    };
}

// Frames of `events` as rows.
inline std::vector<json::value> rows_of(const std::vector<sluice::sse::Event>& events) {
    std::vector<json::value> out;
    for (auto& [seq, row] : frames_of(events)) {
        out.push_back(row);
    }
    return out;
}

// The content blocks of type `type` in `events`' assistant (or, for tool_result, user) rows.
inline std::vector<json::object>
blocks_of(const std::vector<sluice::sse::Event>& events, std::string_view type) {
    std::vector<json::object> out;
    for (const auto& row : rows_of(events)) {
        const auto& o = row.as_object();
        if ((o.at("type") != "assistant" && o.at("type") != "user") || !o.contains("message")) {
            continue;
        }
        const auto* content = o.at("message").as_object().if_contains("content");
        if (content == nullptr || !content->is_array()) {
            continue;
        }
        for (const auto& b : content->as_array()) {
            if (b.is_object() && b.at("type").is_string() && b.at("type").get_string() == type) {
                out.push_back(b.as_object());
            }
        }
    }
    return out;
}

} // namespace sluice::test::codex_e2e
