// `sluice service install|uninstall` end to end: the units it writes pass `systemd-analyze
// verify`, it never overwrites or removes a unit it did not write. HOME and XDG_* point into a
// temp dir: nothing here touches the real home or /etc.
#include "../../apps/sluice/service_units.hpp"
#include "support/hub_process.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sluice::test {
namespace {

namespace fs = std::filesystem;

struct Run {
    int status{-1};
    std::string out; ///< stdout and stderr
};

// Runs `command` (a shell line) with HOME and the XDG dirs inside `home`.
Run run_in(const TempDir& home, const std::string& command) {
    const std::string h = home.path();
    const std::string line = "env HOME=" + h + " XDG_CONFIG_HOME=" + h + "/config XDG_STATE_HOME="
                             + h + "/state XDG_RUNTIME_DIR=" + h + "/run " + command + " 2>&1";
    Run r;
    FILE* p = ::popen(line.c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        r.out.append(buf, n);
    }
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

Run sluice_in(const TempDir& home, const std::string& args) {
    return run_in(home, std::string(SLUICE_BINARY) + " " + args);
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A home for a test: its runtime dir made (systemd-analyze --user needs one).
struct Home {
    TempDir dir;
    fs::path units = fs::path(dir.path()) / "config/systemd/user";

    Home() { fs::create_directories(fs::path(dir.path()) / "run"); }
};

TEST(Service, InstallWritesUserUnitsThatSystemdVerifies) {
    Home home;
    const auto r = sluice_in(home.dir, "service install --socket -- --threads 2");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(
        r.out.find("systemctl --user daemon-reload && systemctl --user enable --now"), r.out.npos)
        << r.out;
    const auto service = read(home.units / "sluice.service");
    EXPECT_NE(
        service.find(
            "ExecStart=" + std::string(SLUICE_BINARY) + " serve --data " + home.dir.path()
            + "/state/sluice --threads 2\n"),
        service.npos)
        << service;
    EXPECT_NE(service.find("ReadWritePaths=" + home.dir.path() + "/state/sluice\n"), service.npos);
    EXPECT_NE(service.find("ReadWritePaths=-%h/.claude -%h/.claude.json\n"), service.npos);
    EXPECT_TRUE(fs::is_directory(home.dir.path() + "/state/sluice"));
    for (const char* unit : {"sluice.service", "sluice.socket"}) {
        const auto v =
            run_in(home.dir, "systemd-analyze --user verify " + (home.units / unit).string());
        EXPECT_EQ(v.status, 0) << unit << ": " << v.out;
        EXPECT_EQ(v.out, "") << unit;
    }
}

TEST(Service, InstallWritesSystemUnitsThatSystemdVerifies) {
    Home home;
    const std::string dir = home.dir.path() + "/etc-units";
    const auto r = sluice_in(home.dir, "service install --system --socket --unit-dir " + dir);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(
        r.out.find("systemctl daemon-reload && systemctl enable --now sluice.socket"), r.out.npos)
        << r.out;
    const auto service = read(fs::path(dir) / "sluice.service");
    EXPECT_NE(service.find("--data /var/lib/sluice"), service.npos) << service;
    EXPECT_NE(service.find("StateDirectory=sluice\n"), service.npos);
    for (const char* unit : {"sluice.service", "sluice.socket"}) {
        const auto v = run_in(home.dir, "systemd-analyze verify " + dir + "/" + unit);
        EXPECT_EQ(v.status, 0) << unit << ": " << v.out;
        EXPECT_EQ(v.out, "") << unit;
    }
}

TEST(Service, PrintWritesTheUnitsToStdoutAndNoFile) {
    Home home;
    const auto r = sluice_in(home.dir, "service install --system --print --config /etc/x.toml");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.rfind(std::string(app::UNIT_MARKER), 0), 0U) << r.out;
    EXPECT_NE(r.out.find("--config /etc/x.toml"), r.out.npos) << r.out;
    EXPECT_NE(r.out.find("Type=notify\n"), r.out.npos);
    EXPECT_FALSE(fs::exists(home.dir.path() + "/config")); // nothing written, not even a dir
    EXPECT_FALSE(fs::exists(home.dir.path() + "/state"));
}

TEST(Service, InstallRefusesToOverwriteAUnitSluiceDidNotWrite) {
    Home home;
    fs::create_directories(home.units);
    write_file((home.units / "sluice.service").string(), "[Service]\nExecStart=/bin/mine\n");
    const auto r = sluice_in(home.dir, "service install");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("not written by sluice"), r.out.npos) << r.out;
    EXPECT_EQ(read(home.units / "sluice.service"), "[Service]\nExecStart=/bin/mine\n");
}

TEST(Service, InstallReplacesAUnitItWrote) {
    Home home;
    ASSERT_EQ(sluice_in(home.dir, "service install").status, 0);
    const auto r = sluice_in(home.dir, "service install -- --threads 3");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("replaced"), r.out.npos) << r.out;
    EXPECT_NE(read(home.units / "sluice.service").find("--threads 3"), std::string::npos);
}

TEST(Service, UninstallRemovesOnlyTheUnitsSluiceWrote) {
    Home home;
    ASSERT_EQ(sluice_in(home.dir, "service install").status, 0);
    write_file((home.units / "sluice.socket").string(), "[Socket]\nListenStream=1\n");
    // What `systemctl --user enable` would have linked.
    fs::create_directories(home.units / "default.target.wants");
    fs::create_symlink(
        home.units / "sluice.service", home.units / "default.target.wants/sluice.service");
    const auto r = sluice_in(home.dir, "service uninstall");
    EXPECT_EQ(r.status, 1) << r.out; // one was left
    EXPECT_NE(r.out.find("removed " + (home.units / "sluice.service").string()), r.out.npos)
        << r.out;
    EXPECT_NE(r.out.find("left " + (home.units / "sluice.socket").string()), r.out.npos) << r.out;
    EXPECT_FALSE(fs::exists(home.units / "sluice.service"));
    EXPECT_FALSE(fs::is_symlink(home.units / "default.target.wants/sluice.service"));
    EXPECT_TRUE(fs::exists(home.units / "sluice.socket"));
    const auto again = sluice_in(home.dir, "service uninstall");
    EXPECT_NE(again.out.find("not written by sluice"), again.out.npos) << again.out;
}

TEST(ServiceUnits, ExecStartQuotesWhatSystemdWouldSplitOrExpand) {
    EXPECT_EQ(app::exec_word("/usr/bin/sluice"), "/usr/bin/sluice");
    EXPECT_EQ(app::exec_word("a b"), "\"a b\"");
    EXPECT_EQ(app::exec_word("100%"), "\"100%%\"");
    EXPECT_EQ(app::exec_word("$HOME"), "\"$$HOME\"");
    EXPECT_EQ(app::exec_word("say \"hi\""), "\"say \\\"hi\\\"\"");
    EXPECT_EQ(app::exec_word(""), "\"\"");
    app::UnitSpec spec;
    spec.binary = "/opt/sluice dir/sluice";
    spec.data_dir = "/d";
    spec.config = "/c.toml";
    spec.serve_args = {"--listen", "0.0.0.0:1"};
    EXPECT_EQ(
        app::exec_start(spec),
        "\"/opt/sluice dir/sluice\" serve --data /d --config /c.toml --listen 0.0.0.0:1");
}

TEST(ServiceUnits, ServiceUnitSaysWhatTheIssueAsks) {
    app::UnitSpec spec;
    spec.binary = "/usr/bin/sluice";
    spec.data_dir = "/home/u/.local/state/sluice";
    const auto u = app::service_unit(spec);
    for (const char* line :
         {"Type=notify\n",
          "WatchdogSec=30\n",
          "NoNewPrivileges=yes\n",
          "ProtectSystem=strict\n",
          "ReadWritePaths=/home/u/.local/state/sluice\n",
          "PrivateTmp=yes\n",
          "Restart=on-failure\n",
          "WantedBy=default.target\n"}) {
        EXPECT_NE(u.find(line), u.npos) << line;
    }
    EXPECT_EQ(u.find("Requires=sluice.socket"), u.npos);
    EXPECT_TRUE(app::written_by_sluice(u));
    spec.socket = true;
    EXPECT_NE(app::service_unit(spec).find("Requires=sluice.socket\n"), std::string::npos);
    EXPECT_TRUE(app::written_by_sluice(app::socket_unit(spec)));
    EXPECT_NE(app::socket_unit(spec).find("ListenStream=127.0.0.1:8420\n"), std::string::npos);
    EXPECT_FALSE(app::written_by_sluice("[Unit]\n" + std::string(app::UNIT_MARKER) + "\n"));
}

} // namespace
} // namespace sluice::test
