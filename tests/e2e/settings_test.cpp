// End-to-end tests of a hub installed once: the config file, SLUICE_<FLAG> variables and flags
// in that order; the standard data dir found from any folder; hub.json telling the CLI where the
// hub is; one hub per data dir; links with the hub's real address.
#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace sluice::test {
namespace {

struct Run {
    int status{-1};
    std::string out;
    std::string err;
};

// `cd <cwd> && <env> sluice <args>` (bounded by `timeout` seconds; SIGTERM then) with stdout and
// stderr captured.
Run sluice(const TempDir& dir, const std::string& cwd, const std::string& args, int timeout = 30) {
    const std::string cmd = "cd '" + cwd + "' && timeout " + std::to_string(timeout)
                            + " " SLUICE_BINARY " " + args + " >" + dir.file("out") + " 2>"
                            + dir.file("err");
    const int st = std::system(cmd.c_str());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir.file("out")), slurp(dir.file("err"))};
}

// Runs `sluice serve ARGS` in `cwd` (behind `prefix`, e.g. a prlimit) until it says it is
// listening, then ends it by its pid (SIGTERM: a clean exit) and waits for it to go. A fixed
// `timeout` let a loaded machine end the ASan binary before it printed anything.
Run serve_until_listening(
    const TempDir& dir,
    const std::string& cwd,
    const std::string& args,
    const std::string& prefix = "") {
    // A run before this one left its output here: gone first, or the wait below would read the
    // old "listening on" before the new hub's shell truncated the files.
    for (const char* name : {"out", "err", "pid"}) {
        std::filesystem::remove(dir.file(name));
    }
    const std::string cmd = "cd '" + cwd + "' && (" + prefix + " " SLUICE_BINARY " serve " + args
                            + " >" + dir.file("out") + " 2>" + dir.file("err") + " & echo $! >"
                            + dir.file("pid") + ")";
    if (std::system(cmd.c_str()) != 0) {
        return {-1, "", "could not start: " + cmd};
    }
    const auto pid = static_cast<pid_t>(std::stol(slurp(dir.file("pid"))));
    const auto said = [&] { return slurp(dir.file("out")) + slurp(dir.file("err")); };
    for (int i = 0; i < 600 && said().find("listening on") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid, SIGTERM);
    // Not our child: polled, not waited (gone, or a zombie its new parent has yet to reap).
    const auto running = [pid] {
        const auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
        const auto paren = stat.rfind(')');
        return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
    };
    for (int i = 0; i < 300 && running(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return {0, slurp(dir.file("out")), slurp(dir.file("err"))};
}

// Points XDG_STATE_HOME and XDG_CONFIG_HOME into `dir` for this test (ctest runs each test in its
// own process) and clears what would leak in from the machine.
void scratch_home(const TempDir& dir) {
    std::filesystem::create_directories(dir.file("state"));
    std::filesystem::create_directories(dir.file("conf/sluice"));
    ::setenv("XDG_STATE_HOME", dir.file("state").c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", dir.file("conf").c_str(), 1);
    ::unsetenv("SLUICE_HUB");
    ::unsetenv("SLUICE_TOKEN");
    ::unsetenv("SLUICE_CONFIG");
}

// The `key = value  # origin` line of `config show`'s output for `key`.
std::string line_of(const std::string& out, const std::string& key) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + " = ", 0) == 0) {
            return line;
        }
    }
    return {};
}

TEST(Settings, FileThenEnvironmentThenFlagsAndConfigShowSaysWhereEachCameFrom) {
    TempDir dir;
    scratch_home(dir);
    spill(
        dir.file("conf/sluice/config.toml"),
        "# a hub's settings\nthreads = 3\nwindow_cap = 10\nallow_host = [\"a.example\", "
        "\"b.example\"]\ntoken = \"secret-in-file\"\nwrite_timeout_ms = 5000\n");
    ::setenv("SLUICE_WINDOW_CAP", "20", 1);
    ::setenv("SLUICE_WRITE_TIMEOUT_MS", "6000", 1);
    const auto r = sluice(dir, dir.path(), "config show --write-timeout-ms 7000");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string file = dir.file("conf/sluice/config.toml");
    EXPECT_NE(line_of(r.out, "threads").find("threads = 3"), std::string::npos) << r.out;
    EXPECT_NE(line_of(r.out, "threads").find("# file " + file + ":2"), std::string::npos);
    EXPECT_NE(line_of(r.out, "window_cap").find("= 20"), std::string::npos) << r.out;
    EXPECT_NE(line_of(r.out, "window_cap").find("# env SLUICE_WINDOW_CAP"), std::string::npos);
    EXPECT_NE(line_of(r.out, "write_timeout_ms").find("= 7000"), std::string::npos) << r.out;
    EXPECT_NE(line_of(r.out, "write_timeout_ms").find("# flag"), std::string::npos);
    EXPECT_NE(
        line_of(r.out, "allow_host").find(R"(["a.example", "b.example"])"), std::string::npos);
    EXPECT_NE(line_of(r.out, "listen").find("# default"), std::string::npos);
    EXPECT_NE(line_of(r.out, "data").find(dir.file("state") + "/sluice"), std::string::npos)
        << "the standard data dir: " << r.out;
    EXPECT_EQ(r.out.find("secret-in-file"), std::string::npos) << "the token is never shown";
    EXPECT_NE(line_of(r.out, "token").find("not shown"), std::string::npos) << r.out;
}

TEST(Settings, AnUnknownKeyOrABadValueStopsTheStartNamingItsLine) {
    TempDir dir;
    scratch_home(dir);
    const std::string file = dir.file("conf/sluice/config.toml");
    spill(file, "threads = 2\n\nworkspace_rot = \"/src\"\n");
    auto r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(file + ":3: key 'workspace_rot'"), std::string::npos) << r.err;
    spill(file, "listen = \"127.0.0.1:0\"\nthreads = 100\n");
    r = sluice(dir, dir.path(), "serve");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(file + ":2: key 'threads': "), std::string::npos) << r.err;
    spill(file, "no_token = \"yes\"\n");
    r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(":1: key 'no_token': expects true or false"), std::string::npos) << r.err;
    spill(file, "threads = [1\n");
    r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(file + ":1: "), std::string::npos) << r.err;
    std::filesystem::remove(file);
    ::setenv("SLUICE_THREADS", "many", 1);
    r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("SLUICE_THREADS: "), std::string::npos) << r.err;
    ::unsetenv("SLUICE_THREADS");
    r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0 --config " + dir.file("missing.toml"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("missing.toml: no such config file"), std::string::npos) << r.err;
}

TEST(Settings, ServedFromTwoFoldersTheHubHasTheSameSeatsAndTheCliFindsItOnARandomPort) {
    TempDir dir;
    scratch_home(dir);
    std::filesystem::create_directories(dir.file("a"));
    std::filesystem::create_directories(dir.file("b"));
    std::string seat;
    {
        SluiceProcess hub(
            {"serve", "--listen", "127.0.0.1:0", "--pace", "0"},
            true,
            HubAuth::as_given,
            dir.file("a"));
        ASSERT_NE(hub.port(), 8420U);
        // No --hub, no --token, another folder: hub.json and the token are in the data dir.
        auto r = sluice(dir, dir.file("b"), "new from-b");
        ASSERT_EQ(r.status, 0) << r.err;
        seat = r.out.substr(0, r.out.find('\n'));
        ASSERT_FALSE(seat.empty());
        r = sluice(dir, dir.file("b"), "seats --hub 127.0.0.1:" + std::to_string(hub.port()));
        ASSERT_EQ(r.status, 0) << "--hub without a scheme: " << r.err;
        EXPECT_NE(r.out.find(seat), std::string::npos);
        EXPECT_EQ(hub.terminate(), 0);
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("state/sluice/hub.json")))
        << "a clean exit removes hub.json";
    SluiceProcess hub(
        {"serve", "--listen", "127.0.0.1:0", "--pace", "0"},
        true,
        HubAuth::as_given,
        dir.file("b"));
    const auto r = sluice(dir, dir.path(), "seats");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(seat), std::string::npos) << "the same data dir from another folder";
}

TEST(Settings, ASecondHubOnOneDataDirRefusesNamingTheFirst) {
    TempDir dir;
    scratch_home(dir);
    SluiceProcess first(hub_args(dir));
    const auto r = sluice(dir, dir.path(), "serve --listen 127.0.0.1:0 --data " + dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("pid " + std::to_string(first.pid())), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(first.base()), std::string::npos) << r.err;
    EXPECT_EQ(http("GET", first.base() + "/healthz").status, 200U) << "the first goes on";
}

TEST(Settings, AViewerLinkCarriesTheHubsRealPort) {
    TempDir dir;
    scratch_home(dir);
    SluiceProcess hub({"serve", "--listen", "127.0.0.1:0", "--pace", "0"}, true, HubAuth::as_given);
    const auto r = sluice(dir, dir.path(), "token new --viewer");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(hub.base() + "/#token="), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(":8420"), std::string::npos) << r.err;
}

TEST(Settings, AnEarlierVersionsDataDirIsUsedWithANoticeAndMovedOnlyWhenAsked) {
    TempDir dir;
    scratch_home(dir);
    std::filesystem::create_directories(dir.file("old/sluice-data/seats"));
    spill(dir.file("old/sluice-data/token"), "tok\n");
    auto r = serve_until_listening(dir, dir.file("old"), "--listen 127.0.0.1:0");
    EXPECT_NE(r.err.find("notice: using " + dir.file("old/sluice-data")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("sluice data move"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("data in " + dir.file("old/sluice-data")), std::string::npos) << r.out;
    r = sluice(dir, dir.file("old"), "data move");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("old/sluice-data")));
    EXPECT_EQ(slurp(dir.file("state/sluice/token")), "tok\n");
    r = sluice(dir, dir.file("old"), "data move");
    EXPECT_EQ(r.status, 2) << "nothing left to move";
}

TEST(Settings, TheConnectionsWarningAppearsOnlyWhenTheFlagWasGiven) {
    TempDir dir;
    scratch_home(dir);
    auto r = serve_until_listening(dir, dir.path(), "--listen 127.0.0.1:0 --data " + dir.file("d"));
    EXPECT_NE((r.out + r.err).find("listening on"), std::string::npos) << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find("--max-connections"), std::string::npos) << r.out << r.err;
    r = serve_until_listening(
        dir,
        dir.path(),
        "--listen 127.0.0.1:0 --max-connections 5000 --data " + dir.file("d"),
        "prlimit --nofile=512:512");
    EXPECT_NE((r.out + r.err).find("--max-connections 5000"), std::string::npos) << r.out << r.err;
}

} // namespace
} // namespace sluice::test
