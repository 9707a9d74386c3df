// End to end: the real Claude Code CLI (pinned 2.1.328) in `claude -p` mode against the loopback
// fake Messages API, with sluice's hooks installed by `sluice hooks install` in a scratch HOME:
// the Bash call it asks permission for runs only once approved from sluice, and not when denied.
#include "e2e/claude_world.hpp"

#include <future>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_e2e;

struct HookedClaude {
    ClaudeWorld w;
    fs::path home = w.dir.file("home");
    fs::path made = w.cwd / "made.txt";
    SluiceProcess hub{
        hub_args(w.data, {"--claude-projects", (home / ".claude" / "projects").string()}),
        true,
        HubAuth::as_given};
    std::string token = hub.token();

    HookedClaude() {
        fs::create_directories(home / ".claude" / "projects");
        // 2.1.328 defaults to auto mode, which would run a `touch` without asking.
        std::ofstream(home / ".claude" / "settings.json")
            << R"({"permissions":{"defaultMode":"default"}})";
        const auto line = "env HOME=" + home.string() + " XDG_STATE_HOME=" + w.dir.file("state")
                          + " " SLUICE_BINARY " hooks install --timeout 60s >"
                          + w.dir.file("install") + " 2>&1";
        EXPECT_EQ(std::system(line.c_str()), 0) << slurp(w.dir.file("install"));
    }

    // `claude -p PROMPT` in the work folder, the hub named in its environment (as the hook's).
    int run_claude(const std::string& prompt) const {
        const auto line = "cd " + w.cwd.string() + " && env SLUICE_HUB=" + hub.base()
                          + " SLUICE_TOKEN=" + token + " timeout 120 " + w.claude + " -p '" + prompt
                          + "' >" + w.dir.file("claude.out") + " 2>&1";
        const int st = std::system(line.c_str());
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }

    // The hooked seat with a pending prompt (its id, "" after 90 s).
    [[nodiscard]] std::string waiting_seat() const {
        const auto until = std::chrono::steady_clock::now() + 90s;
        while (std::chrono::steady_clock::now() < until) {
            const auto r = http("GET", hub.base() + "/v1/seats", {}, bearer(token));
            for (const auto& s : r.json.at("seats").as_array()) {
                if (s.as_object().contains("pending_permissions")
                    && s.as_object().contains("hooked")) {
                    return std::string(s.at("id").as_string());
                }
            }
            std::this_thread::sleep_for(100ms);
        }
        return {};
    }

    [[nodiscard]] int sluice(const std::string& args) const {
        const auto line = "timeout 30 " SLUICE_BINARY " " + args + " --hub " + hub.base()
                          + " --token " + token + " >/dev/null 2>&1";
        const int st = std::system(line.c_str());
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
};

TEST(HookBridgeClaude, PrintModeWaitsForTheHookAndRunsTheCommandOnceApproved) {
    SLUICE_NEED_CLAUDE();
    HookedClaude c;
    auto run = std::async(std::launch::async, [&] { return c.run_claude("make file"); });
    const auto seat = c.waiting_seat();
    ASSERT_FALSE(seat.empty()) << slurp(c.w.dir.file("claude.out"));
    EXPECT_FALSE(fs::exists(c.made)) << "nothing runs before the answer";
    const auto prompts =
        http("GET", c.hub.base() + "/v1/seats/" + seat + "/permissions", {}, bearer(c.token));
    const auto& p = prompts.json.at("permissions").at(0);
    EXPECT_EQ(p.at("tool_name"), "Bash");
    EXPECT_EQ(p.at("cwd").as_string(), c.w.cwd.string());
    EXPECT_EQ(c.sluice("approve " + seat), 0);
    EXPECT_EQ(run.get(), 0) << slurp(c.w.dir.file("claude.out"));
    EXPECT_TRUE(fs::exists(c.made)) << slurp(c.w.dir.file("claude.out"));
}

TEST(HookBridgeClaude, PrintModeDeniedWithAMessageDoesNotRunTheCommand) {
    SLUICE_NEED_CLAUDE();
    HookedClaude c;
    auto run = std::async(std::launch::async, [&] { return c.run_claude("make file"); });
    const auto seat = c.waiting_seat();
    ASSERT_FALSE(seat.empty()) << slurp(c.w.dir.file("claude.out"));
    EXPECT_EQ(c.sluice("deny " + seat + " --message 'not on a Friday'"), 0);
    run.get();
    EXPECT_FALSE(fs::exists(c.made));
    // Claude received the message: its next request carries it in the tool result.
    bool told = false;
    for (const auto& body : c.w.fake.requests()) {
        told = told || json::serialize(body).find("not on a Friday") != std::string::npos;
    }
    EXPECT_TRUE(told);
}

} // namespace
