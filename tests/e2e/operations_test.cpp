// End-to-end tests of running a hub for months: `sluice rm` (archived, or purged), disk use per
// seat, archives pruned by age, log lines as text or JSON, and /metrics checked by Prometheus's
// own `promtool check metrics`.
#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace sluice::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

struct Run {
    int status{-1};
    std::string out;
};

// `<command>` through the shell, stdout and stderr together, bounded at 30 s.
Run shell(const TempDir& dir, const std::string& command) {
    const std::string cmd = "timeout 30 " + command + " >" + dir.file("run.out") + " 2>&1";
    const int st = std::system(cmd.c_str());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir.file("run.out"))};
}

// One turn on `seat`, to its end.
void run_turn(const SluiceProcess& hub, const std::string& seat) {
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events");
    // Subscribed before the turn starts: a turn that ended before the stream opened would never
    // show its `ended` to it (seen once under a loaded fresh-clone run).
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }));
    const auto turn = send(hub, seat, "hello");
    ASSERT_GT(turn, 0U);
    ASSERT_TRUE(sub.wait_for([turn](const auto& ev) { return has_turn_state(ev, turn, "ended"); }));
}

// The folders under the data dir's archive/ whose names start with `id`.
std::vector<fs::path> archived(const TempDir& dir, const std::string& id) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(dir.path()) / "archive", ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it->path().filename().string().starts_with(id + ".")) {
            out.push_back(it->path());
        }
    }
    return out;
}

// The folder moves on the writer after the seat's last write: waits (up to 5 s) until it is there.
void wait_archived(const TempDir& dir, const std::string& id) {
    for (int i = 0; i < 100 && archived(dir, id).empty(); ++i) {
        std::this_thread::sleep_for(50ms);
    }
}

std::uint64_t bytes_under(const fs::path& dir) {
    std::uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file()) {
            n += e.file_size();
        }
    }
    return n;
}

TEST(Operations, RmArchivesTheSeatsFolderAndPurgeDeletesIt) {
    TempDir dir;
    std::string kept;
    std::string purged;
    {
        SluiceProcess hub(hub_args(dir));
        kept = new_seat(hub);
        purged = new_seat(hub);
        run_turn(hub, kept);
        // A purge that is neither true nor false is refused, and removes nothing.
        EXPECT_EQ(http("DELETE", hub.base() + "/v1/seats/" + kept + "?purge=maybe").status, 400U);
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + kept).status, 200U);
        const auto cli = [&](const std::string& args) {
            return shell(dir, SLUICE_BINARY " " + args + " --hub " + hub.base());
        };
        auto r = cli("rm " + kept);
        ASSERT_EQ(r.status, 0) << r.out;
        EXPECT_NE(r.out.find("archived"), std::string::npos) << r.out;
        r = cli("rm --purge " + purged);
        ASSERT_EQ(r.status, 0) << r.out;
        EXPECT_NE(r.out.find("deleted"), std::string::npos) << r.out;
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + kept).status, 404U);
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + purged).status, 404U);
        r = cli("rm " + kept); // gone: the hub's reason, exit 1
        EXPECT_EQ(r.status, 1);
        EXPECT_NE(r.out.find("no such seat"), std::string::npos) << r.out;
        wait_archived(dir, kept);
        EXPECT_EQ(hub.terminate(), 0);
    }
    const auto seats = fs::path(dir.path()) / "seats";
    EXPECT_FALSE(fs::exists(seats / kept));
    EXPECT_FALSE(fs::exists(seats / purged));
    const auto kept_at = archived(dir, kept);
    ASSERT_EQ(kept_at.size(), 1U);
    // Archived whole: its transcript holds the turn it ran.
    EXPECT_NE(slurp(kept_at.front() / "transcript.jsonl").find("hello"), std::string::npos);
    EXPECT_TRUE(archived(dir, purged).empty());
    // A restart serves neither.
    SluiceProcess again(hub_args(dir));
    const auto list = http("GET", again.base() + "/v1/seats");
    EXPECT_EQ(list.body.find(kept), std::string::npos);
    EXPECT_EQ(list.body.find(purged), std::string::npos);
}

TEST(Operations, StatsAndSeatsDuShowEachSeatsDiskUse) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir));
    const auto seat = new_seat(hub);
    run_turn(hub, seat);
    const auto st = http("GET", hub.base() + "/v1/stats");
    ASSERT_EQ(st.status, 200U) << st.body;
    const auto& disk = st.json.at("disk").as_object();
    const auto used = disk.at("seats").at(seat).to_number<std::uint64_t>();
    const auto on_disk = bytes_under(fs::path(dir.path()) / "seats" / seat);
    EXPECT_GT(used, 0U);
    EXPECT_EQ(used, on_disk); // idle: the transcript and meta.json are synced and whole
    EXPECT_GE(disk.at("bytes").to_number<std::uint64_t>(), used);
    const auto r = shell(dir, SLUICE_BINARY " seats --du --hub " + hub.base());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("DISK"), std::string::npos) << r.out;
    const auto line_at = r.out.find(seat);
    ASSERT_NE(line_at, std::string::npos) << r.out;
    const auto line = r.out.substr(line_at, r.out.find('\n', line_at) - line_at);
    EXPECT_TRUE(line.find(" KiB ") != std::string::npos || line.find(" B ") != std::string::npos)
        << line;
    EXPECT_NE(r.out.find("disk: "), std::string::npos) << r.out;
    // Without --du the listing is as it was.
    const auto plain = shell(dir, SLUICE_BINARY " seats --hub " + hub.base());
    EXPECT_EQ(plain.out.find("DISK"), std::string::npos) << plain.out;
}

TEST(Operations, RetainArchivesDaysPrunesOnlyWhatIsOlder) {
    TempDir dir;
    std::string seat;
    std::string old_epoch;
    std::string gone;
    {
        SluiceProcess hub(hub_args(dir));
        seat = new_seat(hub);
        gone = new_seat(hub);
        run_turn(hub, seat);
        const auto reset = http("POST", hub.base() + "/v1/seats/" + seat + "/reset");
        ASSERT_EQ(reset.status, 200U) << reset.body;
        old_epoch = std::string(reset.json.at("previous_epoch").as_string());
        ASSERT_EQ(http("DELETE", hub.base() + "/v1/seats/" + gone).status, 200U);
        wait_archived(dir, gone);
        EXPECT_EQ(hub.terminate(), 0);
    }
    const auto seat_dir = fs::path(dir.path()) / "seats" / seat;
    const auto reset_archive = seat_dir / ("transcript." + old_epoch + ".jsonl");
    ASSERT_TRUE(fs::exists(reset_archive));
    ASSERT_EQ(archived(dir, gone).size(), 1U);
    const auto gone_at = archived(dir, gone).front();
    // Two more, younger than the retention: a second reset archive and a second removed seat.
    const auto young_archive = seat_dir / "transcript.eyoung.jsonl";
    fs::copy_file(reset_archive, young_archive);
    const auto young_folder = fs::path(dir.path()) / "archive" / (gone + ".young");
    fs::create_directories(young_folder);
    std::ofstream(young_folder / "meta.json") << "{}";
    const auto ten_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 10);
    fs::last_write_time(reset_archive, ten_days_ago);
    fs::last_write_time(gone_at, ten_days_ago);
    {
        SluiceProcess hub(hub_args(dir, {"--retain-archives-days", "7"}));
        for (int i = 0; i < 100 && fs::exists(gone_at); ++i) {
            std::this_thread::sleep_for(50ms);
        }
        EXPECT_FALSE(fs::exists(reset_archive));
        EXPECT_FALSE(fs::exists(gone_at));
        EXPECT_TRUE(fs::exists(young_archive));
        EXPECT_TRUE(fs::exists(young_folder));
        EXPECT_TRUE(fs::exists(seat_dir / "transcript.jsonl")); // the live conversation stays
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + seat).status, 200U);
        EXPECT_EQ(hub.terminate(), 0);
        EXPECT_NE(
            hub.output().find("archives pruned: 1 reset archive(s), 1 removed seat"),
            std::string::npos)
            << hub.output();
    }
    // 0 (the default) keeps everything, however old.
    fs::last_write_time(young_archive, ten_days_ago);
    SluiceProcess hub(hub_args(dir));
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(fs::exists(young_archive));
}

TEST(Operations, LogFormatJsonWritesOneObjectPerLineAndTextHasNoColourOffATerminal) {
    for (const std::string format : {"json", "text"}) {
        TempDir dir;
        SluiceProcess hub(hub_args(dir, {"--log-format", format}));
        EXPECT_EQ(hub.terminate(), 0);
        const auto out = hub.output();
        EXPECT_EQ(out.find('\x1b'), std::string::npos) << out; // stdout is a pipe here
        std::istringstream in(out);
        std::string line;
        bool saw_shutdown = false;
        while (std::getline(in, line)) {
            if (format == "json" && line.starts_with("{")) {
                boost::system::error_code ec;
                const auto v = json::parse(line, ec);
                ASSERT_FALSE(ec) << line;
                const auto& o = v.as_object();
                EXPECT_TRUE(o.contains("time") && o.contains("level") && o.contains("message"))
                    << line;
                saw_shutdown |= o.at("message").as_string().starts_with("shutting down")
                                && o.at("level").as_string() == "info";
            } else if (format == "text" && line.find(" info shutting down") != std::string::npos) {
                saw_shutdown = true;
                EXPECT_EQ(line.find('T'), 10U) << line; // 2026-12-04T18:30:00.123Z info …
            }
        }
        EXPECT_TRUE(saw_shutdown) << format << ": " << out;
    }
    TempDir dir;
    SluiceProcess bad({"serve", "--data", dir.path(), "--log-format", "xml"}, false);
    EXPECT_NE(bad.wait(10s), 0);
}

// Every line of `text` for metric `name` (with labels), e.g. `sluice_build_info{…} 1`.
std::vector<std::string> samples(const std::string& text, const std::string& name) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(name + " ") || line.starts_with(name + "{")) {
            out.push_back(line);
        }
    }
    return out;
}

double value_of(const std::string& line) {
    return std::stod(line.substr(line.rfind(' ') + 1));
}

TEST(Operations, MetricsPassPromtoolAndCountTheProcessAndItsTurns) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir));
    const auto seat = new_seat(hub);
    run_turn(hub, seat);
    run_turn(hub, seat);
    const auto m = http("GET", hub.base() + "/metrics");
    ASSERT_EQ(m.status, 200U);
    std::ofstream(dir.file("metrics.txt")) << m.body;
    // Prometheus's own linter (Debian's prometheus package): exit 0 and no complaint.
    const auto lint = shell(dir, "promtool check metrics < " + dir.file("metrics.txt"));
    EXPECT_EQ(lint.status, 0) << lint.out;
    EXPECT_EQ(lint.out, "") << lint.out;

    const auto build = samples(m.body, "sluice_build_info");
    ASSERT_EQ(build.size(), 1U) << m.body;
    EXPECT_NE(build[0].find("version=\"0."), std::string::npos) << build[0];
    EXPECT_NE(build[0].find("commit=\""), std::string::npos) << build[0];
    const auto rss = samples(m.body, "process_resident_memory_bytes");
    ASSERT_EQ(rss.size(), 1U);
    EXPECT_GT(value_of(rss[0]), 1e6);
    const auto fds = samples(m.body, "process_open_fds");
    ASSERT_EQ(fds.size(), 1U);
    EXPECT_GE(value_of(fds[0]), 4); // stdio, the listener, the connection at least
    const auto start = samples(m.body, "process_start_time_seconds");
    ASSERT_EQ(start.size(), 1U);
    const auto now = static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
    EXPECT_NEAR(value_of(start[0]), now, 120);
    // Two turns ended, none failed; every bucket of the +Inf one counts them.
    const auto count = samples(m.body, "sluice_turn_duration_seconds_count");
    ASSERT_EQ(count.size(), 3U) << m.body;
    EXPECT_EQ(count[0], "sluice_turn_duration_seconds_count{outcome=\"ended\"} 2");
    EXPECT_EQ(count[2], "sluice_turn_duration_seconds_count{outcome=\"failed\"} 0");
    const auto buckets = samples(m.body, "sluice_turn_duration_seconds_bucket");
    EXPECT_NE(
        std::find(
            buckets.begin(),
            buckets.end(),
            "sluice_turn_duration_seconds_bucket{outcome=\"ended\",le=\"+Inf\"} 2"),
        buckets.end())
        << m.body;
    // The two turns' frames reached their viewer: publish-to-write times were observed, each
    // under the histogram's last bound (5 s) on loopback.
    const auto writes = samples(m.body, "sluice_publish_to_write_seconds_count");
    ASSERT_EQ(writes.size(), 1U) << m.body;
    EXPECT_GE(value_of(writes[0]), 2) << m.body; // a batch per turn at least
    const auto within = samples(m.body, "sluice_publish_to_write_seconds_bucket{le=\"5\"}");
    ASSERT_EQ(within.size(), 1U) << m.body;
    EXPECT_EQ(value_of(within[0]), value_of(writes[0])) << m.body;
}

} // namespace
} // namespace sluice::test
