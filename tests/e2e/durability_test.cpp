// End-to-end durability tests of `sluice serve`: a full disk, kill -9 mid-turn, damaged files and
// a read-only data dir — the real binary on real files.
#include "support/files.hpp"
#include "support/hub_process.hpp"
#include "support/small_disk.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace {

using namespace sluice::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> serve_args(const fs::path& data, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"serve", "--listen", "127.0.0.1:0", "--data", data, "--pace", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

Reply post_prompt(const SluiceProcess& hub, const std::string& seat, const std::string& text) {
    return http(
        "POST",
        hub.base() + "/v1/seats/" + seat + "/messages",
        json::serialize(json::object{{"text", text}}));
}

std::string events_url(const SluiceProcess& hub, const std::string& seat) {
    return hub.base() + "/v1/seats/" + seat + "/events";
}

auto attached() {
    return [](const std::vector<sluice::sse::Event>& ev) { return !ev.empty(); };
}

auto turn_state(std::uint64_t turn, std::string state) {
    return [turn, state](const std::vector<sluice::sse::Event>& ev) {
        return has_turn_state(ev, turn, state);
    };
}

// Every frame of the seat, by position, paged back from the newest (20 turns a page).
std::vector<json::value> whole_history(const SluiceProcess& hub, const std::string& seat) {
    std::vector<json::value> all;
    std::string cursor;
    for (int guard = 0; guard < 1000; ++guard) {
        auto page = http(
            "GET",
            hub.base() + "/v1/seats/" + seat + "/history?turns=20"
                + (cursor.empty() ? "" : "&before=" + cursor));
        EXPECT_EQ(page.status, 200U) << page.body;
        if (page.status != 200) {
            break;
        }
        std::vector<json::value> here;
        for (const auto& t : page.json.at("turns").as_array()) {
            for (const auto& f : t.at("frames").as_array()) {
                here.push_back(f);
            }
        }
        all.insert(all.begin(), here.begin(), here.end());
        if (page.json.at("cursor").is_null()) {
            break;
        }
        cursor = std::to_string(page.json.at("cursor").to_number<std::int64_t>());
    }
    return all;
}

// The newest turn (from its prompt: a user row with string content) is whole: every tool_use
// answered, then a result row last.
::testing::AssertionResult newest_turn_is_whole(const std::vector<json::value>& rows) {
    std::size_t from = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        if (r.at("type") == "user" && r.at("message").at("content").is_string()) {
            from = i;
        }
    }
    std::set<std::string> open;
    for (std::size_t i = from; i < rows.size(); ++i) {
        const auto& m = rows[i].as_object().if_contains("message");
        if (m == nullptr || !m->at("content").is_array()) {
            continue;
        }
        for (const auto& b : m->at("content").as_array()) {
            if (b.at("type") == "tool_use") {
                open.insert(std::string(b.at("id").as_string()));
            } else if (b.at("type") == "tool_result") {
                open.erase(std::string(b.at("tool_use_id").as_string()));
            }
        }
    }
    if (rows.empty() || rows.back().at("type") != "result") {
        return ::testing::AssertionFailure()
               << "the newest turn has no closing result row: "
               << (rows.empty() ? std::string("(empty)") : json::serialize(rows.back()));
    }
    if (!open.empty()) {
        return ::testing::AssertionFailure() << open.size() << " tool_use(s) unanswered";
    }
    return ::testing::AssertionSuccess();
}

std::uint64_t metric(const SluiceProcess& hub, const std::string& name) {
    const auto body = http("GET", hub.base() + "/metrics").body;
    const auto at = body.find("\n" + name + " ");
    if (at == std::string::npos) {
        return ~std::uint64_t{0};
    }
    return std::stoull(body.substr(at + name.size() + 2));
}

// A script whose one round writes `bytes` of text in one assistant frame.
fs::path big_answer_script(const TempDir& dir, std::size_t bytes) {
    const auto script = dir.file("big.json");
    std::ofstream(script) << R"({"delay_ms": 0, "chunk_bytes": 65536, "rounds": [{"events": [)"
                          << R"({"text": ")" << std::string(65536, 'x') << R"(", "repeat": )"
                          << bytes / 65536 << R"(}], "stop_reason": "end_turn"}]})";
    return script;
}

TEST(Durability, ADiskFullFailsTheTurnVisiblyAndARestartRestoresTheSeat) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    SmallDisk disk(data, "512k");
    if (!disk.ok()) {
        GTEST_SKIP() << "needs root to mount a small tmpfs";
    }
    const auto script = big_answer_script(dir, 1024 * 1024); // twice the disk
    std::string seat;
    std::string epoch;
    std::int64_t last_seq = -1;
    {
        SluiceProcess hub(serve_args(data, {"--script", script}));
        seat = new_seat(hub);
        ASSERT_FALSE(seat.empty());
        SseClient sub(events_url(hub, seat));
        ASSERT_TRUE(sub.wait_for(attached()));
        auto r = post_prompt(hub, seat, "fill the disk");
        ASSERT_EQ(r.status, 202U) << r.body;
        ASSERT_TRUE(sub.wait_for(turn_state(1, "failed"), 30s));
        std::string error;
        for (const auto& e : sub.events()) {
            if (e.type == "turn" && e.data.find("failed") != std::string::npos) {
                error = std::string(json::parse(e.data).at("error").as_string());
            }
        }
        EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
        const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
        EXPECT_EQ(info.json.at("state").as_string(), "degraded") << info.body;
        EXPECT_NE(info.body.find("No space left on device"), std::string::npos) << info.body;
        EXPECT_GE(metric(hub, "sluice_transcript_write_errors_total"), 1U);
        EXPECT_EQ(metric(hub, "sluice_seats_degraded"), 1U);
        auto refused = post_prompt(hub, seat, "again");
        EXPECT_EQ(refused.status, 507U) << refused.body;
        // Everything served is on disk: the frames published are the transcript's.
        const auto frames = frames_of(sub.events());
        ASSERT_FALSE(frames.empty());
        last_seq = frames.back().first;
        epoch = std::string(info.json.at("epoch").as_string());
        const auto meta = json::parse(slurp(data / "seats" / seat / "meta.json"));
        EXPECT_EQ(meta.at("id").as_string(), seat); // metadata intact
        EXPECT_EQ(hub.terminate(), 0);
    }
    ASSERT_TRUE(disk.remount("size=64m"));
    SluiceProcess hub(serve_args(data));
    const auto list = http("GET", hub.base() + "/v1/seats");
    ASSERT_EQ(list.json.at("seats").as_array().size(), 1U) << list.body;
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
    EXPECT_EQ(info.json.at("state").as_string(), "idle") << info.body;
    const auto rows = whole_history(hub, seat);
    EXPECT_TRUE(newest_turn_is_whole(rows));
    EXPECT_EQ(rows.back().at("result").as_string(), "interrupted");
    // Resume from the last frame served before the failure: it never skips a frame.
    SseClient resumed(events_url(hub, seat), epoch + ":" + std::to_string(last_seq));
    ASSERT_TRUE(resumed.wait_for(attached()));
    const auto first = resumed.events().front();
    if (first.type == "resumed") {
        ASSERT_TRUE(resumed.wait_for([&](const auto& ev) {
            return static_cast<std::int64_t>(frames_of(ev).size()) + last_seq + 1
                   == static_cast<std::int64_t>(rows.size());
        }));
        const auto replay = frames_of(resumed.events());
        for (std::size_t i = 0; i < replay.size(); ++i) {
            EXPECT_EQ(replay[i].first, last_seq + 1 + static_cast<std::int64_t>(i));
        }
    } else {
        EXPECT_EQ(first.type, "connected");
    }
    auto again = post_prompt(hub, seat, "after the disk was freed");
    EXPECT_EQ(again.status, 202U) << again.body;
}

// A turn of several rounds, each streaming text and running a slow bash tool.
fs::path tool_flood_script(const TempDir& dir) {
    const auto script = dir.file("tools.json");
    std::ofstream out(script);
    out << R"({"delay_ms": 1, "chunk_bytes": 512, "rounds": [)";
    for (int i = 0; i < 6; ++i) {
        out << R"({"events": [{"text": ")" << std::string(512, 'a' + static_cast<char>(i))
            << R"(", "repeat": 20}, {"tool_use": {"choices": [{"name": "bash", "input": )"
            << R"({"command": "sleep 0.03; echo round )" << i << R"("}}]}}]},)";
    }
    out << R"({"events": [{"text": "done"}], "stop_reason": "end_turn"}]})";
    return script;
}

TEST(Durability, KillNineAtRandomPointsNeverServesAHalfTurnNorChangesWhatWasDelivered) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    const auto script = tool_flood_script(dir);
    const std::vector<std::string> extra{"--script", script, "--tools", "bash"};
    std::mt19937 rng(20261201); // seeded: a failure names its trial
    std::uniform_int_distribution<int> delay_ms(5, 400);
    std::string seat;
    std::map<std::int64_t, std::string> delivered; // position -> row, over every trial
    constexpr int TRIALS = 20;
    for (int trial = 0; trial < TRIALS; ++trial) {
        SCOPED_TRACE("trial " + std::to_string(trial));
        SluiceProcess hub(serve_args(data, extra));
        if (seat.empty()) {
            seat = new_seat(hub);
        }
        const auto rows = whole_history(hub, seat);
        for (const auto& [pos, row] : delivered) {
            ASSERT_LT(pos, static_cast<std::int64_t>(rows.size()));
            ASSERT_EQ(json::serialize(rows[static_cast<std::size_t>(pos)]), row) << "at " << pos;
        }
        if (!rows.empty()) {
            ASSERT_TRUE(newest_turn_is_whole(rows));
        }
        SseClient sub(events_url(hub, seat));
        ASSERT_TRUE(sub.wait_for(attached()));
        auto r = post_prompt(hub, seat, "flood " + std::to_string(trial));
        ASSERT_EQ(r.status, 202U) << r.body; // the next turn works
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        ::kill(hub.pid(), SIGKILL);
        EXPECT_GE(hub.wait(5s), 0);
        sub.stop();
        for (const auto& [seq, row] : frames_of(sub.events())) {
            delivered[seq] = json::serialize(row);
        }
        const auto file = data / "seats" / seat / "transcript.jsonl";
        SluiceProcess window(
            std::vector<std::string>{"transcript", "window", file.string(), "--json"}, false);
        ASSERT_EQ(window.wait(10s), 0) << window.output();
        EXPECT_NE(window.output().find("\"total_frames\""), std::string::npos);
    }
    SluiceProcess hub(serve_args(data, extra));
    const auto rows = whole_history(hub, seat);
    EXPECT_TRUE(newest_turn_is_whole(rows));
    bool interrupted = false;
    for (const auto& row : rows) {
        interrupted =
            interrupted || (row.at("type") == "result" && row.at("result") == "interrupted");
    }
    EXPECT_TRUE(interrupted);
    SseClient sub(events_url(hub, seat));
    ASSERT_TRUE(sub.wait_for(attached()));
    auto r = post_prompt(hub, seat, "the last one");
    ASSERT_EQ(r.status, 202U) << r.body;
    const auto turn = r.json.at("turn").to_number<std::uint64_t>();
    ASSERT_TRUE(sub.wait_for(turn_state(turn, "ended"), 30s));
}

// A seat with two finished turns, made by a hub that then stops; returns the seat id.
std::string seat_with_two_turns(const fs::path& data, std::vector<json::value>& rows) {
    SluiceProcess hub(serve_args(data));
    auto seat = new_seat(hub);
    SseClient sub(events_url(hub, seat));
    EXPECT_TRUE(sub.wait_for(attached()));
    for (std::uint64_t t = 1; t <= 2; ++t) {
        EXPECT_EQ(post_prompt(hub, seat, "turn " + std::to_string(t)).status, 202U);
        EXPECT_TRUE(sub.wait_for(turn_state(t, "ended"), 30s));
    }
    rows = whole_history(hub, seat);
    EXPECT_EQ(hub.terminate(), 0);
    return seat;
}

std::vector<std::string> lines_of(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

void write_lines(const fs::path& p, const std::vector<std::string>& lines, bool last_nl = true) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        out << lines[i];
        if (i + 1 < lines.size() || last_nl) {
            out << '\n';
        }
    }
}

TEST(Durability, ACorruptMiddleLineIsSkippedAndReportedAndTheSeatStaysServed) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    std::vector<json::value> before;
    const auto seat = seat_with_two_turns(data, before);
    const auto file = data / "seats" / seat / "transcript.jsonl";
    auto lines = lines_of(file);
    ASSERT_GE(lines.size(), 4U);
    const std::size_t bad = 2;                        // 0-based: the third line
    lines[bad] = std::string(lines[bad].size(), '#'); // same length: the index still matches
    write_lines(file, lines);
    SluiceProcess hub(serve_args(data));
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
    ASSERT_EQ(info.status, 200U) << info.body;
    EXPECT_EQ(info.json.at("state").as_string(), "idle") << info.body;
    ASSERT_TRUE(info.json.as_object().contains("warnings")) << info.body;
    EXPECT_EQ(info.json.at("warnings").as_array().at(0).at("line").to_number<std::int64_t>(), 3);
    const auto rows = whole_history(hub, seat);
    ASSERT_EQ(rows.size(), before.size() - 1);
    for (std::size_t i = 0, j = 0; i < before.size(); ++i) {
        if (i == bad) {
            continue;
        }
        EXPECT_EQ(json::serialize(rows[j++]), json::serialize(before[i]));
    }
    SluiceProcess cli(std::vector<std::string>{"transcript", "window", file.string()}, false);
    EXPECT_EQ(cli.wait(10s), 0) << cli.output();
    SluiceProcess strict(
        std::vector<std::string>{"transcript", "window", file.string(), "--strict"}, false);
    EXPECT_EQ(strict.wait(10s), 2);
}

TEST(Durability, TwoBadTailLinesAndAGarbageIndexStillServeTheGoodHistory) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    std::vector<json::value> before;
    const auto seat = seat_with_two_turns(data, before);
    const auto file = data / "seats" / seat / "transcript.jsonl";
    auto lines = lines_of(file);
    const auto good = lines.size();
    lines.emplace_back(R"({"type":"assistant","message":{"con)");
    lines.emplace_back("garbage");
    write_lines(file, lines);
    {
        std::ofstream idx(file.string() + ".sidx", std::ios::binary | std::ios::trunc);
        idx << std::string(100, '\x7f');
    }
    SluiceProcess hub(serve_args(data));
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
    ASSERT_EQ(info.status, 200U) << info.body;
    ASSERT_TRUE(info.json.as_object().contains("warnings")) << info.body;
    EXPECT_EQ(
        info.json.at("warnings").as_array().at(0).at("line").to_number<std::uint64_t>(), good + 1);
    const auto rows = whole_history(hub, seat);
    ASSERT_EQ(rows.size(), before.size());
    EXPECT_EQ(json::serialize(rows.back()), json::serialize(before.back()));
    auto r = post_prompt(hub, seat, "still works");
    EXPECT_EQ(r.status, 202U) << r.body;
}

TEST(Durability, ATruncatedIndexIsRebuilt) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    std::vector<json::value> before;
    const auto seat = seat_with_two_turns(data, before);
    const auto idx = data / "seats" / seat / "transcript.jsonl.sidx";
    ASSERT_TRUE(fs::exists(idx));
    fs::resize_file(idx, 20);
    SluiceProcess hub(serve_args(data));
    const auto rows = whole_history(hub, seat);
    ASSERT_EQ(rows.size(), before.size());
    EXPECT_EQ(json::serialize(rows.front()), json::serialize(before.front()));
    EXPECT_GT(fs::file_size(idx), 20U);
}

TEST(Durability, AReadOnlyDataDirServesHistoryAndRefusesPromptsWithTheReason) {
    TempDir dir;
    const auto data = fs::path(dir.path()) / "data";
    SmallDisk disk(data, "16m");
    if (!disk.ok()) {
        GTEST_SKIP() << "needs root to mount a tmpfs read-only";
    }
    std::vector<json::value> before;
    const auto seat = seat_with_two_turns(data, before);
    ASSERT_TRUE(disk.remount("size=16m", MS_RDONLY));
    SluiceProcess hub(serve_args(data));
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
    ASSERT_EQ(info.status, 200U) << info.body;
    EXPECT_EQ(info.json.at("state").as_string(), "degraded") << info.body;
    EXPECT_NE(info.body.find("read-only"), std::string::npos) << info.body;
    const auto rows = whole_history(hub, seat);
    ASSERT_EQ(rows.size(), before.size());
    SseClient sub(events_url(hub, seat));
    ASSERT_TRUE(sub.wait_for(attached()));
    EXPECT_EQ(sub.events().front().type, "connected");
    auto r = post_prompt(hub, seat, "no");
    EXPECT_EQ(r.status, 409U) << r.body;
    EXPECT_NE(r.body.find("read-only"), std::string::npos) << r.body;
    // The search index (a cache in the data dir) cannot be made: search is off and says why.
    const auto found = http("GET", hub.base() + "/v1/search?q=hello");
    EXPECT_EQ(found.status, 503U) << found.body;
    EXPECT_NE(found.body.find("search is off"), std::string::npos) << found.body;
}

} // namespace
