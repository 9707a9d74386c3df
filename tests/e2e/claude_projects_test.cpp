// End to end: `sluice serve --claude-projects DIR` over a tree of real Claude Code session files
// (built in a temp dir from ../shared/fixtures): listing, live follow, resume, torn tails,
// truncated and replaced files, and nothing written under DIR.
#include "e2e/claude_tree.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_tree;
using sluice::test::slurp;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The epochs of the `connected` events seen so far, in order.
std::vector<std::string> connected_epochs(const std::vector<sluice::sse::Event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) {
        if (e.type == "connected") {
            out.emplace_back(json::parse(e.data).at("epoch").as_string());
        }
    }
    return out;
}

std::int64_t monotonic_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A Claude Code stand-in: a child process appending `rows` rows to `file`, one every
// `interval`, each carrying its index and the monotonic time it was written ("live <i> <ns>");
// row `torn_at` is written in two pieces `torn_pause` apart (a line mid-write).
int spawn_writer(
    const fs::path& file,
    int rows,
    std::chrono::milliseconds interval,
    int torn_at = -1,
    std::chrono::milliseconds torn_pause = 0ms) {
    const int pid = ::fork();
    if (pid != 0) {
        return pid;
    }
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    std::string held;
    for (int i = 0; i < rows; ++i) {
        std::this_thread::sleep_for(interval);
        const bool user = i % 2 == 0;
        json::object row;
        row["type"] = user ? "user" : "assistant";
        row["uuid"] = "w" + std::to_string(i);
        row["sessionId"] = "writer";
        const std::string text = "live " + std::to_string(i) + " " + std::to_string(monotonic_ns());
        if (user) {
            row["message"] = json::object{{"role", "user"}, {"content", text}};
        } else {
            row["message"] = json::object{
                {"role", "assistant"},
                {"content", json::array{json::object{{"type", "text"}, {"text", text}}}}};
        }
        std::string line = json::serialize(row) + "\n";
        if (i + 1 == torn_at) {
            held = std::move(line); // goes out with the first half of the torn row
        } else if (i == torn_at) {
            // One write: a whole row and the torn row's first half (no newline yet).
            const auto half = line.size() / 2;
            held.append(line, 0, half);
            (void)!::write(fd, held.data(), held.size());
            std::this_thread::sleep_for(torn_pause);
            (void)!::write(fd, line.data() + half, line.size() - half);
        } else {
            (void)!::write(fd, line.data(), line.size());
        }
    }
    ::close(fd);
    ::_exit(0);
}

void reap(int pid) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

// The text of a live row ("live <i> <ns>"), or "".
std::string live_text(const json::value& row) {
    const auto& c = row.at("message").at("content");
    std::string t = c.is_string() ? std::string(c.as_string())
                                  : std::string(c.as_array().at(0).at("text").as_string());
    return t.rfind("live ", 0) == 0 ? t : std::string();
}

TEST(ClaudeProjects, ListsSessionsWithTitlesProjectsAndNoSubAgents) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto seats = seats_of(hub);
    ASSERT_EQ(seats.size(), 3U) << "the sub-agent files are not seats of their own";
    for (const auto* s : {&SUMMARY_SESSION, &COMPACT_SESSION, &SUBAGENT_SESSION}) {
        ASSERT_TRUE(seats.contains(seat_id(*s))) << s->id;
        const auto& seat = seats.at(seat_id(*s));
        EXPECT_EQ(seat.at("source").as_string(), "claude");
        EXPECT_EQ(seat.at("state").as_string(), "idle");
        EXPECT_TRUE(seat.at("live").as_bool()) << "just written";
    }
    const auto& summary = seats.at(seat_id(SUMMARY_SESSION));
    EXPECT_EQ(summary.at("project").as_string(), "/Users/dain/workspace/claude-code-log");
    // Claude Code's summary rows name it (the file starts with 15 of them).
    const auto fx = slurp(fixture_path(SUMMARY_SESSION.fixture));
    EXPECT_NE(
        fx.find("\"summary\":\"" + std::string(summary.at("title").as_string()) + "\""),
        std::string::npos)
        << summary.at("title");
    // No title rows: the first prompt, whole lines of it trimmed.
    const auto& compact = seats.at(seat_id(COMPACT_SESSION));
    EXPECT_EQ(compact.at("title").as_string(), "what is 2 + 2?");
    EXPECT_EQ(compact.at("project").as_string(), "/tmp/workspace");
    EXPECT_EQ(compact.at("turns").as_int64(), 4) << "the fixtures README counts 4 turns";
    const auto& sub = seats.at(seat_id(SUBAGENT_SESSION));
    EXPECT_EQ(sub.at("project").as_string(), "-experiments/worktrees");
    EXPECT_LE(sub.at("title").as_string().size(), 124U);
    EXPECT_TRUE(sub.at("title").as_string().starts_with("OK, we're going to make"));

    // Read-only: a prompt, a rename and a delete are refused with the reason.
    const auto base = hub.base() + "/v1/seats/" + seat_id(COMPACT_SESSION);
    for (const auto& [method, path, body] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"POST", "/messages", R"({"text":"hello"})"},
             {"PATCH", "", R"({"name":"x"})"},
             {"DELETE", "", ""}}) {
        auto r = http(method, base + path, body);
        EXPECT_EQ(r.status, 409U) << method << " " << r.body;
        EXPECT_NE(
            r.body.find("read-only: a Claude Code session on this machine"), std::string::npos)
            << r.body;
    }
    EXPECT_EQ(seats_of(hub).size(), 3U);
}

TEST(ClaudeProjects, OpensAtFirstViewerAndPagesHistory) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    const auto id = seat_id(SUMMARY_SESSION);
    SseClient sse(hub.base() + "/v1/seats/" + id + "/events");
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !connected_epochs(ev).empty(); }));
    const auto connected = json::parse(sse.events().at(0).data);
    EXPECT_FALSE(connected.at("recovered").as_bool());
    const auto seat = seat_of(hub, id);
    EXPECT_EQ(seat.at("turns").as_int64(), 3) << "the fixtures README counts 3 turns";
    EXPECT_EQ(seat.at("frames").as_int64(), connected.at("seq").as_int64() + 1);
    // A page of one turn: its frames are the fixture's rows.
    auto page = http("GET", hub.base() + "/v1/seats/" + id + "/history?turns=1");
    ASSERT_EQ(page.status, 200U) << page.body;
    ASSERT_EQ(page.json.at("turns").as_array().size(), 1U);
    // The index lives in the data dir.
    EXPECT_TRUE(fs::exists(fs::path(data.path()) / "foreign" / id / "index.sidx"));
}

TEST(ClaudeProjects, AppendedRowsReachSubscribersInTimeAndResumeWithoutLossOrRepeat) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    const auto file = session_path(dir, COMPACT_SESSION);
    SluiceProcess hub(serve_args(data, dir));
    const auto url = hub.base() + "/v1/seats/" + seat_id(COMPACT_SESSION) + "/events";
    constexpr int rows = 24;
    constexpr int torn_at = 5;
    std::map<int, std::int64_t> latency_ns; // row → receipt − write
    std::map<int, std::int64_t> seq_of;     // row → its seq
    std::map<int, std::int64_t> written_ns; // row → when it was written
    std::int64_t gap_from = 0;              // no subscriber between these two times:
    std::int64_t gap_to = 0;                // rows written then wait for the reconnect
    std::vector<std::int64_t> seqs;         // every frame seq received, in order, both streams
    std::optional<std::int64_t> torn_seen_at;
    std::string last_id;
    const auto take = [&](const std::vector<sluice::sse::Event>& events, std::size_t& done) {
        const auto now = monotonic_ns();
        for (; done < events.size(); ++done) {
            const auto& e = events[done];
            if (e.type != "frame") {
                continue;
            }
            auto v = json::parse(e.data);
            seqs.push_back(v.at("seq").as_int64());
            last_id = e.id;
            const auto text = live_text(v.at("row"));
            if (text.empty()) {
                continue;
            }
            std::istringstream in(text.substr(5));
            int i = 0;
            std::int64_t written = 0;
            in >> i >> written;
            latency_ns[i] = now - written;
            written_ns[i] = written;
            seq_of[i] = v.at("seq").as_int64();
            if (i == torn_at) {
                torn_seen_at = now;
            }
        }
    };
    {
        SseClient first(url);
        ASSERT_TRUE(first.wait_for([](const auto& ev) { return !connected_epochs(ev).empty(); }));
        // The torn row's two halves are 600 ms apart: it must arrive once, whole, after both.
        const int writer = spawn_writer(file, rows, 40ms, torn_at, 600ms);
        std::size_t done = 0;
        ASSERT_TRUE(first.wait_for(
            [&](const auto& ev) {
                take(ev, done);
                return latency_ns.size() >= 12;
            },
            20s));
        gap_from = monotonic_ns();
        first.stop();
        take(first.events(), done);
        // Reconnect while the writer goes on.
        SseClient second(url, last_id);
        std::size_t done2 = 0;
        ASSERT_TRUE(second.wait_for(
            [&](const auto& ev) {
                if (gap_to == 0 && !ev.empty()) {
                    gap_to = monotonic_ns();
                }
                take(ev, done2);
                return latency_ns.size() >= static_cast<std::size_t>(rows);
            },
            20s))
            << latency_ns.size() << " rows seen";
        const auto ev2 = second.events();
        ASSERT_FALSE(ev2.empty());
        EXPECT_EQ(ev2.front().type, "resumed") << "resumed in place, not resynced";
        reap(writer);
    }
    // The 12 prompts the writer typed are turns of their own, counted as they come.
    EXPECT_EQ(seat_of(hub, seat_id(COMPACT_SESSION)).at("turns").as_int64(), 4 + rows / 2);
    // Every row once, in order, with consecutive seqs across the reconnect.
    ASSERT_EQ(latency_ns.size(), static_cast<std::size_t>(rows));
    for (std::size_t i = 1; i < seqs.size(); ++i) {
        EXPECT_EQ(seqs[i], seqs[i - 1] + 1) << "a frame missed or repeated at " << i;
    }
    for (int i = 1; i < rows; ++i) {
        EXPECT_EQ(seq_of[i], seq_of[i - 1] + 1);
    }
    std::vector<std::int64_t> sorted;
    for (int i = 0; i < rows; ++i) {
        if (i == torn_at) {
            continue; // its latency counts from its first half
        }
        if (written_ns[i] >= gap_from && written_ns[i] <= gap_to) {
            continue; // written while no subscriber was connected (the reconnect)
        }
        sorted.push_back(latency_ns[i]);
        EXPECT_LT(latency_ns[i], 250'000'000)
            << "row " << i << " took " << latency_ns[i] / 1'000'000 << " ms";
    }
    EXPECT_GE(latency_ns[torn_at], 600'000'000) << "a torn line is waited for, never served";
    std::sort(sorted.begin(), sorted.end());
    std::printf(
        "live row -> subscriber latency: p50 %.1f ms, max %.1f ms (%zu rows)\n",
        static_cast<double>(sorted[sorted.size() / 2]) / 1e6,
        static_cast<double>(sorted.back()) / 1e6,
        sorted.size());
    // The torn row arrived whole (its text parsed above) and the file is untouched by the hub.
    const auto lines = read_lines(file.string());
    EXPECT_EQ(live_text(json::parse(lines.back())).rfind("live 23 ", 0), 0U);
}

TEST(ClaudeProjects, NewSessionFilesAndProjectsAppear) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    SluiceProcess hub(serve_args(data, dir));
    ASSERT_EQ(seats_of(hub).size(), 3U);
    const std::string id1 = "11111111-2222-3333-4444-555555555555";
    const std::string id2 = "66666666-2222-3333-4444-555555555555";
    put(dir / SUMMARY_SESSION.project / (id1 + ".jsonl"),
        R"({"type":"user","cwd":"/work/a","message":{"role":"user","content":"  first   words  "}})"
        "\n");
    fs::create_directories(dir / "-work-new");
    put(dir / "-work-new" / (id2 + ".jsonl"),
        R"({"type":"user","cwd":"/work/new","message":{"role":"user","content":"hello"}})"
        "\n");
    std::map<std::string, json::object> seats;
    for (int i = 0; i < 100 && seats.size() < 5; ++i) {
        std::this_thread::sleep_for(20ms);
        seats = seats_of(hub);
    }
    ASSERT_EQ(seats.size(), 5U);
    EXPECT_EQ(seats.at("c-" + id1).at("title").as_string(), "first words");
    EXPECT_EQ(seats.at("c-" + id1).at("project").as_string(), "/work/a");
    EXPECT_EQ(seats.at("c-" + id2).at("project").as_string(), "/work/new");
}

TEST(ClaudeProjects, TruncatedOrReplacedFilesAreReadAgainUnderANewEpoch) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    const auto file = session_path(dir, SUMMARY_SESSION);
    const auto id = seat_id(SUMMARY_SESSION);
    const auto lines = read_lines(file.string());
    std::string first_half;
    for (std::size_t i = 0; i < lines.size() / 2; ++i) {
        first_half += lines[i] + "\n";
    }
    std::string e1;
    std::string last_id;
    {
        SluiceProcess hub(serve_args(data, dir));
        SseClient sse(hub.base() + "/v1/seats/" + id + "/events");
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return connected_epochs(ev).size() == 1; }));
        e1 = connected_epochs(sse.events()).at(0);
        const auto frames_before = seat_of(hub, id).at("frames").as_int64();
        // Replaced: a new file renamed over it (how editors and some writers save).
        put(dir / SUMMARY_SESSION.project / "replacement.tmp", first_half);
        fs::rename(dir / SUMMARY_SESSION.project / "replacement.tmp", file);
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return connected_epochs(ev).size() == 2; }))
            << "a replaced file resyncs every viewer";
        const auto e2 = connected_epochs(sse.events()).at(1);
        EXPECT_NE(e2, e1);
        const auto frames_after = seat_of(hub, id).at("frames").as_int64();
        EXPECT_LT(frames_after, frames_before);
        // Truncated in place (same inode): read again too.
        {
            std::ofstream out(file, std::ios::binary | std::ios::trunc);
            out << lines.at(0) << "\n" << lines.at(1) << "\n";
        }
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return connected_epochs(ev).size() == 3; }))
            << "a truncated file resyncs every viewer";
        EXPECT_NE(connected_epochs(sse.events()).at(2), e2);
        const auto ev = sse.events();
        e1 = connected_epochs(ev).at(2);
        last_id = ev.back().id;
    }
    // Restarted with the file unchanged: the kept index and epoch hold, the viewer resumes.
    const auto key_before = slurp(fs::path(data.path()) / "foreign" / id / "key.json");
    {
        SluiceProcess hub(serve_args(data, dir));
        SseClient sse(hub.base() + "/v1/seats/" + id + "/events", last_id);
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !ev.empty(); }));
        EXPECT_EQ(sse.events().front().type, "resumed")
            << last_id << " " << sse.events().front().data.substr(0, 200) << " key: " << key_before;
    }
    // Rewritten in place while the hub was down (same inode, same size, other bytes): the key
    // in the data dir no longer holds, so it is indexed again under a new epoch.
    {
        auto text = slurp(file);
        const auto at = text.find("\"type\":\"");
        ASSERT_NE(at, std::string::npos);
        const int fd = ::open(file.c_str(), O_WRONLY);
        std::this_thread::sleep_for(20ms); // another mtime
        const std::string same_size_other = "\"tYpe\":\"";
        ASSERT_EQ(
            ::pwrite(fd, same_size_other.data(), same_size_other.size(), static_cast<off_t>(at)),
            8);
        ::close(fd);
        SluiceProcess hub(serve_args(data, dir));
        SseClient sse(hub.base() + "/v1/seats/" + id + "/events", last_id);
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !connected_epochs(ev).empty(); }));
        EXPECT_NE(connected_epochs(sse.events()).at(0), e1);
    }
}

TEST(ClaudeProjects, NothingIsWrittenUnderTheProjectsFolder) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    build_tree(dir);
    const auto before = snapshot(dir);
    {
        SluiceProcess hub(serve_args(data, dir));
        for (const auto& [id, seat] : seats_of(hub)) {
            SseClient sse(hub.base() + "/v1/seats/" + id + "/events");
            ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !connected_epochs(ev).empty(); }));
            auto page = http("GET", hub.base() + "/v1/seats/" + id + "/history?before=1");
            EXPECT_EQ(page.status, 200U) << page.body;
            http("POST", hub.base() + "/v1/seats/" + id + "/messages", R"({"text":"x"})");
            http("DELETE", hub.base() + "/v1/seats/" + id);
        }
        EXPECT_EQ(hub.terminate(), 0);
    }
    EXPECT_EQ(snapshot(dir), before) << "the hub wrote under the projects folder";
    EXPECT_TRUE(fs::exists(fs::path(data.path()) / "foreign"));
}

} // namespace

namespace {

TEST(ClaudeProjects, ContinueMakesAClaudeSeatThatResumesTheSessionInsideTheWorkspaceRoot) {
    TempDir tree;
    TempDir data;
    TempDir root;
    const fs::path dir = tree.path();
    build_tree(dir); // their cwds lie outside the workspace root
    fs::create_directories(fs::path(root.path()) / "proj");
    const std::string sid = "77777777-2222-3333-4444-555555555555";
    const auto cwd = (fs::path(root.path()) / "proj").string();
    put(dir / "-proj" / (sid + ".jsonl"),
        R"({"type":"user","cwd":")" + cwd + R"(","sessionId":")" + sid
            + R"(","message":{"role":"user","content":"go on"}})"
              "\n");
    auto args = serve_args(data, dir);
    args.insert(args.end(), {"--claude-bin", "/bin/false", "--workspace-root", root.path()});
    SluiceProcess hub(args);
    auto r = http("POST", hub.base() + "/v1/seats/c-" + sid + "/continue", "{}");
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    EXPECT_EQ(r.json.at("continued").as_string(), "c-" + sid);
    const auto s = seat_of(hub, seat);
    EXPECT_EQ(s.at("agent").as_string(), "claude");
    EXPECT_FALSE(s.contains("source")) << "a hosted seat, not a read-only one";
    const auto meta = json::parse(slurp(fs::path(data.path()) / "seats" / seat / "meta.json"));
    EXPECT_EQ(meta.at("session_id").as_string(), sid) << "it resumes the session";
    EXPECT_EQ(meta.at("cwd").as_string(), cwd);
    // Its history starts where the session's does: the session's prompt is its first frame.
    const auto page = http("GET", hub.base() + "/v1/seats/" + seat + "/history").json;
    ASSERT_FALSE(page.at("turns").as_array().empty()) << json::serialize(page);
    const auto& first = page.at("turns").as_array().at(0).at("frames").as_array().at(0);
    EXPECT_EQ(first.at("message").at("content").as_string(), "go on") << json::serialize(page);
    // A second continue is the same seat: one conversation never forks into two seats.
    r = http("POST", hub.base() + "/v1/seats/c-" + sid + "/continue", "{}");
    ASSERT_EQ(r.status, 200U) << r.body;
    EXPECT_EQ(r.json.at("seat").as_string(), seat);
    EXPECT_EQ(r.json.at("existing"), true);
    // Listed once: as the hosted seat, not also as the session it continues.
    const auto listed = seats_of(hub);
    EXPECT_TRUE(listed.contains(seat));
    EXPECT_FALSE(listed.contains("c-" + sid)) << "the continued session is listed as its seat";
    EXPECT_TRUE(listed.contains(seat_id(COMPACT_SESSION))) << "the others stay listed";
    // Outside the workspace root: refused, naming the session's cwd and the setting.
    r = http("POST", hub.base() + "/v1/seats/" + seat_id(COMPACT_SESSION) + "/continue", "{}");
    EXPECT_EQ(r.status, 400U) << r.body;
    EXPECT_NE(
        r.body.find("the session's cwd /tmp/workspace lies outside the workspace root"),
        std::string::npos)
        << r.body;
    EXPECT_NE(r.body.find("workspace_root"), std::string::npos) << r.body;
    // Only a foreign session continues.
    r = http("POST", hub.base() + "/v1/seats/" + seat + "/continue", "{}");
    EXPECT_EQ(r.status, 409U) << r.body;
}

} // namespace
