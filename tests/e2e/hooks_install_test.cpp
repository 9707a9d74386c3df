// End to end: `sluice hooks install|uninstall|status` on Claude Code settings files in a scratch
// HOME: merged beside the hooks already there, removed exactly, the file restored byte for byte.
#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using namespace sluice::test;
namespace json = boost::json;
namespace fs = std::filesystem;

struct Run {
    int status{-1};
    std::string out;
};

// `sluice <args>` with HOME and the XDG dirs inside `home`.
Run sluice_in(const TempDir& home, const std::string& args) {
    const std::string h = home.path();
    const std::string line = "env -u CLAUDE_CONFIG_DIR HOME=" + h + " XDG_STATE_HOME=" + h
                             + "/state XDG_CONFIG_HOME=" + h + "/config " SLUICE_BINARY " " + args
                             + " 2>&1";
    Run r;
    FILE* p = ::popen(line.c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
        r.out.append(buf.data(), n);
    }
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// A settings file as a person keeps it: their own layout, their own hooks, other keys.
const std::string OWN_SETTINGS = R"json({
    "permissions": {"allow": ["Bash(npm test)"], "defaultMode": "default"},
    "hooks": {
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]
    },
    "model":    "opus"
}
)json";

// The events whose entries run `sluice hook claude`, with their timeout.
std::vector<std::pair<std::string, std::int64_t>> sluice_entries(const json::value& settings) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& [event, groups] : settings.at("hooks").as_object()) {
        for (const auto& g : groups.as_array()) {
            for (const auto& h : g.at("hooks").as_array()) {
                const auto cmd = std::string(h.at("command").as_string());
                if (cmd.find(" hook claude " + std::string(event)) != std::string::npos) {
                    out.emplace_back(event, h.at("timeout").as_int64());
                }
            }
        }
    }
    return out;
}

TEST(HooksInstall, MergesBesideOwnHooksAndUninstallRestoresTheFileExactly) {
    TempDir home;
    const fs::path file = fs::path(home.path()) / ".claude" / "settings.json";
    spill(file, OWN_SETTINGS);
    const auto in = sluice_in(home, "hooks install --timeout 2m");
    ASSERT_EQ(in.status, 0) << in.out;
    const auto installed = json::parse(slurp(file));
    const auto entries = sluice_entries(installed);
    ASSERT_EQ(entries.size(), 5U) << slurp(file);
    for (const auto& [event, timeout] : entries) {
        EXPECT_EQ(timeout, 120) << event;
    }
    // Theirs kept, in their place.
    EXPECT_EQ(
        installed.at("hooks").at("Stop").as_array().front().at("hooks").at(0).at("command"),
        "notify-send done");
    EXPECT_EQ(installed.at("hooks").at("PreToolUse").as_array().size(), 1U);
    EXPECT_EQ(installed.at("model"), "opus");
    EXPECT_EQ(installed.as_object().begin()->key(), "permissions"); // key order kept
    const auto status = sluice_in(home, "hooks status");
    EXPECT_NE(status.out.find(file.string() + ": installed"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("PermissionRequest"), std::string::npos);
    // Installing again replaces its entries, never doubles them.
    ASSERT_EQ(sluice_in(home, "hooks install").status, 0);
    EXPECT_EQ(sluice_entries(json::parse(slurp(file))).size(), 5U);
    const auto out = sluice_in(home, "hooks uninstall");
    ASSERT_EQ(out.status, 0) << out.out;
    EXPECT_EQ(slurp(file), OWN_SETTINGS) << "uninstall restores the file byte for byte";
    EXPECT_NE(sluice_in(home, "hooks status").out.find(": not installed"), std::string::npos);
}

TEST(HooksInstall, UninstallAfterOtherChangesRemovesOnlySluicesEntries) {
    TempDir home;
    const fs::path project = fs::path(home.path()) / "proj";
    const fs::path file = project / ".claude" / "settings.local.json";
    ASSERT_EQ(sluice_in(home, "hooks install --project " + project.string()).status, 0);
    auto settings = json::parse(slurp(file));
    ASSERT_EQ(sluice_entries(settings).size(), 5U);
    // Someone else adds a hook of their own after the install.
    settings.at("hooks").as_object()["Stop"].as_array().push_back(json::object{
        {"hooks", json::array{json::object{{"type", "command"}, {"command", "mine.sh"}}}}});
    spill(file, json::serialize(settings));
    ASSERT_EQ(sluice_in(home, "hooks uninstall --project " + project.string()).status, 0);
    const auto left = json::parse(slurp(file));
    EXPECT_EQ(
        left,
        json::parse(R"({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine.sh"}]}]}})"));
}

TEST(HooksInstall, UninstallOfAFileInstallMadeRemovesIt) {
    TempDir home;
    const fs::path file = fs::path(home.path()) / "s.json";
    ASSERT_EQ(sluice_in(home, "hooks install --settings " + file.string()).status, 0);
    EXPECT_TRUE(fs::exists(file));
    ASSERT_EQ(sluice_in(home, "hooks uninstall --settings " + file.string()).status, 0);
    EXPECT_FALSE(fs::exists(file));
}

TEST(HooksInstall, RefusesASettingsFileThatIsNotJsonAndLeavesIt) {
    TempDir home;
    const fs::path file = fs::path(home.path()) / "s.json";
    spill(file, "{ not json");
    const auto r = sluice_in(home, "hooks install --settings " + file.string());
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(slurp(file), "{ not json");
}

} // namespace
