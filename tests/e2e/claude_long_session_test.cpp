// End to end: a never-seen session file longer than a window is served from its end at once
// (numbered from its end), counted in the background, and keeps its numbering: paging below
// the window before and after the count, single frames, live rows, and a restart.
#include "e2e/claude_tree.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_tree;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* SESSION = "5f0c1d2e-0000-4000-8000-000000000600";
constexpr int TURNS = 120; // five rows each: 600 frames, far past a 40-frame window

// One row of the session: a prompt opens each turn, four answers follow; every row has a uuid.
std::string session_row(int i) {
    json::object row;
    const bool prompt = i % 5 == 0;
    row["type"] = prompt ? "user" : "assistant";
    row["uuid"] = "r" + std::to_string(i);
    row["sessionId"] = SESSION;
    row["cwd"] = "/w/long";
    const std::string text = (prompt ? "prompt " : "answer ") + std::to_string(i);
    if (prompt) {
        row["message"] = json::object{{"role", "user"}, {"content", text}};
    } else {
        row["message"] = json::object{
            {"role", "assistant"},
            {"content", json::array{json::object{{"type", "text"}, {"text", text}}}}};
    }
    return json::serialize(row) + "\n";
}

// seq → uuid of every frame below `before`, paged down by the history route to the first.
std::map<std::int64_t, std::string>
page_down(const SluiceProcess& hub, const std::string& id, std::int64_t before) {
    std::map<std::int64_t, std::string> out;
    std::optional<std::int64_t> at = before;
    for (int pages = 0; at && pages < 200; ++pages) {
        auto r = http(
            "GET",
            hub.base() + "/v1/seats/" + id + "/history?turns=7&before=" + std::to_string(*at));
        EXPECT_EQ(r.status, 200U) << r.body;
        if (r.status != 200U) {
            break;
        }
        EXPECT_FALSE(r.json.at("turns").as_array().empty()) << "a cursor that led to nothing";
        std::int64_t next = *at;
        for (auto it = r.json.at("turns").as_array().rbegin();
             it != r.json.at("turns").as_array().rend();
             ++it) {
            const auto& frames = it->at("frames").as_array();
            const auto first = it->at("first").as_int64();
            EXPECT_EQ(first + static_cast<std::int64_t>(frames.size()), next) << "no gap";
            for (std::size_t i = 0; i < frames.size(); ++i) {
                EXPECT_TRUE(out.emplace(
                                   first + static_cast<std::int64_t>(i),
                                   std::string(frames[i].at("uuid").as_string()))
                                .second)
                    << "no repeat";
            }
            next = first;
        }
        const auto& c = r.json.at("cursor");
        at = c.is_null() ? std::nullopt : std::optional<std::int64_t>(c.as_int64());
    }
    return out;
}

bool exists_under(const fs::path& dir, const std::string& name) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.path().filename() == name) {
            return true;
        }
    }
    return false;
}

TEST(ClaudeProjects, ALongSessionIsServedFromItsEndAndKeepsItsNumbering) {
    TempDir tree;
    TempDir data;
    const fs::path dir = tree.path();
    const auto file = dir / "-w-long" / (std::string(SESSION) + ".jsonl");
    std::string text;
    for (int i = 0; i < TURNS * 5; ++i) {
        text += session_row(i);
    }
    put(file, text);
    const auto tree_before = snapshot(dir);
    auto args = serve_args(data, dir);
    args.insert(args.end(), {"--window-cap", "40"});
    const std::string id = std::string("c-") + SESSION;
    const std::string url = "/v1/seats/" + id;

    std::string epoch;
    std::int64_t window_first = 0;
    std::int64_t last_seq = 0;
    std::map<std::int64_t, std::string> numbered; // seq → uuid, as first served
    {
        SluiceProcess hub(args);
        SseClient sse(hub.base() + url + "/events");
        ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !ev.empty(); }));
        const auto connected = json::parse(sse.events().front().data);
        epoch = std::string(connected.at("epoch").as_string());
        window_first = connected.at("window").at("first").as_int64();
        last_seq = connected.at("seq").as_int64();
        const auto& frames = connected.at("window").at("frames").as_array();
        ASSERT_FALSE(frames.empty());
        EXPECT_EQ(frames.back().at("uuid").as_string(), "r" + std::to_string(TURNS * 5 - 1));
        for (std::size_t i = 0; i < frames.size(); ++i) {
            numbered[window_first + static_cast<std::int64_t>(i)] =
                std::string(frames[i].at("uuid").as_string());
        }
        EXPECT_EQ(last_seq, window_first + static_cast<std::int64_t>(frames.size()) - 1);

        // Below the window, paged down to the file's first row: every frame once, in order.
        auto below = page_down(hub, id, window_first);
        ASSERT_EQ(below.size() + frames.size(), static_cast<std::size_t>(TURNS * 5));
        std::int64_t seq = below.begin()->first;
        for (int i = 0; i < TURNS * 5; ++i, ++seq) {
            const auto& uuid =
                i < static_cast<int>(below.size()) ? below.at(seq) : numbered.at(seq);
            EXPECT_EQ(uuid, "r" + std::to_string(i)) << seq;
        }
        numbered.insert(below.begin(), below.end());
        const auto lowest = below.begin()->first;
        auto one = http("GET", hub.base() + url + "/frames/" + std::to_string(lowest + 3));
        ASSERT_EQ(one.status, 200U) << one.body;
        EXPECT_EQ(one.json.at("uuid").as_string(), "r3");

        // The background count keeps its index (in the data dir, never under DIR).
        for (int i = 0; i < 200 && !exists_under(data.path(), "key.json"); ++i) {
            std::this_thread::sleep_for(50ms);
        }
        ASSERT_TRUE(exists_under(data.path(), "key.json")) << "the count ended and kept its key";
        EXPECT_EQ(page_down(hub, id, window_first), below) << "the same seqs, the same frames";
        one = http("GET", hub.base() + url + "/frames/" + std::to_string(lowest + 3));
        EXPECT_EQ(one.json.at("uuid").as_string(), "r3");
        EXPECT_EQ(seat_of(hub, id).at("epoch").as_string(), epoch) << "the count kept the epoch";

        // Live rows go on from the numbering served.
        std::ofstream(file, std::ios::binary | std::ios::app) << session_row(TURNS * 5);
        ASSERT_TRUE(sse.wait_for([&](const auto& ev) { return !frames_of(ev).empty(); }, 10s));
        const auto live = frames_of(sse.events());
        EXPECT_EQ(live.front().first, last_seq + 1);
        EXPECT_EQ(live.front().second.at("uuid").as_string(), "r" + std::to_string(TURNS * 5));
        numbered[last_seq + 1] = "r" + std::to_string(TURNS * 5);
        last_seq += 1;
    }
    // Restarted on the same data dir: the kept index, the same epoch and numbering.
    SluiceProcess hub(args);
    SseClient sse(hub.base() + url + "/events", epoch + ":" + std::to_string(last_seq));
    ASSERT_TRUE(sse.wait_for([](const auto& ev) { return !ev.empty(); }));
    EXPECT_EQ(sse.events().front().type, "resumed") << "resumed by its Last-Event-ID";
    const auto all = page_down(hub, id, last_seq + 1);
    EXPECT_EQ(all, numbered);
    auto after = snapshot(dir);
    after.erase(file.string());
    auto before = tree_before;
    before.erase(file.string());
    EXPECT_EQ(after, before) << "nothing written under the projects folder but by the writer";
}

} // namespace
