// End to end: GET /v1/search and `sluice search` against the real hub — a hosted seat's frames
// found; a Claude Code projects tree built from ../shared/fixtures searched against an oracle
// (the frames whose indexed text holds the literal, case ignored, and each hit's frame fetched
// by its seq holds it); a row a live writer appends found; a truncated file's old hits gone; a
// viewer token's scope; a removed seat's hits gone; a deleted index rebuilt.
#include "e2e/claude_tree.hpp"
#include "support/hub_process.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/hub/search_text.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_tree;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path build_projects(const fs::path& root) {
    const auto projects = root / "projects";
    build_fixture_tree(projects);
    return projects;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

// The oracle: (seat, seq) of every frame of `file` whose indexed text holds `q`, case ignored —
// the frames numbered as the transcript numbers them (frame rows only).
void oracle_hits(
    const fs::path& file,
    const std::string& seat,
    const std::string& q,
    std::set<std::pair<std::string, std::uint64_t>>& out) {
    std::istringstream in(slurp(file));
    std::string line;
    std::uint64_t seq = 0;
    while (std::getline(in, line)) {
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        if (ec || !v.is_object()) {
            continue;
        }
        const auto* type = v.as_object().if_contains("type");
        if (type == nullptr || !type->is_string() || !sluice::is_frame_type(type->as_string())) {
            continue;
        }
        if (lower(sluice::hub::indexed_text(v.as_object())).find(lower(q)) != std::string::npos) {
            out.emplace(seat, seq);
        }
        ++seq;
    }
}

json::object
search(const SluiceProcess& hub, const std::string& query, const std::string& token = {}) {
    auto r = http(
        "GET",
        hub.base() + "/v1/search?" + query,
        {},
        token.empty() ? decltype(bearer(token)){} : bearer(token));
    EXPECT_EQ(r.status, 200U) << r.body;
    return r.status == 200 && r.json.is_object() ? r.json.as_object() : json::object{};
}

std::string encoded(const std::string& s) {
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            static constexpr char HEX[] = "0123456789ABCDEF";
            out += '%';
            out += HEX[c >> 4];
            out += HEX[c & 15];
        }
    }
    return out;
}

// Every hit of `q` (paged with the cursor), as (seat, index): the frame's position from its
// file's first frame, as the oracle numbers frames (its seq may not be known yet: seq_of).
std::set<std::pair<std::string, std::uint64_t>>
all_hits(const SluiceProcess& hub, const std::string& q, std::vector<json::object>* raw = nullptr) {
    std::set<std::pair<std::string, std::uint64_t>> out;
    std::string cursor;
    for (int page = 0; page < 100; ++page) {
        auto r = search(
            hub, "q=" + encoded(q) + "&limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
        if (!r.contains("hits")) {
            break;
        }
        for (const auto& h : r.at("hits").as_array()) {
            const auto index = h.at("index").to_number<std::uint64_t>();
            EXPECT_TRUE(out.emplace(std::string(h.at("seat").as_string()), index).second)
                << "a hit twice: " << h;
            if (raw != nullptr) {
                raw->push_back(h.as_object());
            }
        }
        if (r.at("next_cursor").is_null()) {
            break;
        }
        cursor = std::string(r.at("next_cursor").as_string());
    }
    return out;
}

bool indexed(const SluiceProcess& hub, const std::string& token = {}) {
    auto r = search(hub, "q=zzzz", token);
    return r.contains("indexing") && r.at("indexing").at("complete").as_bool()
           && r.at("indexing").at("total").to_number<int>() > 0;
}

// GET /v1/seats/{seat}/frames/{seq}, again while the seat's file is being opened (503).
Reply frame_of(const SluiceProcess& hub, const std::string& seat, std::uint64_t seq) {
    Reply r;
    for (int i = 0; i < 200; ++i) {
        r = http("GET", hub.base() + "/v1/seats/" + seat + "/frames/" + std::to_string(seq));
        if (r.status != 503) {
            break;
        }
        std::this_thread::sleep_for(50ms);
    }
    return r;
}

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 15s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
    return true;
}

// The seq of hit `h` (a hit of `q`): given, or — a session file the hub has not yet opened or
// counted — known once its seat is opened (its history asked for, as a viewer opens it) and
// counted, searched again. Empty when it never becomes known.
std::optional<std::uint64_t>
seq_of(const SluiceProcess& hub, const std::string& q, const json::object& h) {
    if (!h.at("seq").is_null()) {
        return h.at("seq").to_number<std::uint64_t>();
    }
    const auto seat = std::string(h.at("seat").as_string());
    const auto index = h.at("index").to_number<std::uint64_t>();
    std::optional<std::uint64_t> seq;
    eventually([&] {
        http("GET", hub.base() + "/v1/seats/" + seat + "/history?turns=1");
        auto r = search(hub, "q=" + encoded(q) + "&limit=200&seat=" + seat);
        for (const auto& x : r.at("hits").as_array()) {
            if (x.at("index").to_number<std::uint64_t>() == index && !x.at("seq").is_null()) {
                seq = x.at("seq").to_number<std::uint64_t>();
            }
        }
        return seq.has_value();
    });
    return seq;
}

std::string snippet_text(const json::object& hit) {
    std::string out;
    for (const auto& p : hit.at("snippet").as_array()) {
        const auto& o = p.as_object();
        out += o.contains("match") ? "[" + std::string(o.at("match").as_string()) + "]"
                                   : std::string(o.at("text").as_string());
    }
    return out;
}

TEST(Search, AgreesWithAnOracleOverAProjectsTree) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    SluiceProcess hub(serve_args(data, projects));
    ASSERT_TRUE(eventually([&] { return indexed(hub); })) << json::serialize(search(hub, "q=zzzz"));
    // A command, paths, words, substrings inside words, a short query (the scan), odd bytes.
    const std::vector<std::string> queries{
        "git status",
        "ls -la",
        "/Users/dain",
        "package.json",
        "README",
        "error",
        "Recorder",
        "ecord",
        "TODO",
        "npm",
        "def ",
        "\"type\"",
        "th",
        "()",
        "Bash",
        "Read",
        "claude"};
    std::size_t found = 0;
    for (const auto& q : queries) {
        SCOPED_TRACE("query: " + q);
        std::set<std::pair<std::string, std::uint64_t>> expected;
        for (const auto& [fixture, path] : fixture_tree()) {
            if (is_subagent_path(path)) {
                continue; // a sub-agent's rows are searched with its session's (not indexed here)
            }
            oracle_hits(projects / path, "c-" + fs::path(path).stem().string(), q, expected);
        }
        std::vector<json::object> raw;
        const auto got = all_hits(hub, q, &raw);
        EXPECT_EQ(got, expected);
        found += got.size();
        // Each hit's frame, fetched by its seq, holds the match; its snippet marks it.
        std::size_t checked = 0;
        for (const auto& h : raw) {
            if (++checked > 10) {
                break;
            }
            const auto seat = std::string(h.at("seat").as_string());
            const auto seq = seq_of(hub, q, h);
            ASSERT_TRUE(seq) << "no seq for " << h;
            auto f = frame_of(hub, seat, *seq);
            ASSERT_EQ(f.status, 200U) << f.body;
            auto row = json::parse(f.body);
            EXPECT_NE(
                lower(sluice::hub::indexed_text(row.as_object())).find(lower(q)), std::string::npos)
                << seat << " " << *seq << ": " << f.body.substr(0, 300);
            EXPECT_NE(lower(snippet_text(h)).find("[" + lower(q) + "]"), std::string::npos)
                << snippet_text(h);
            EXPECT_FALSE(h.at("archived").as_bool());
            EXPECT_EQ(h.at("source").as_string(), "claude");
        }
    }
    EXPECT_GT(found, 50U) << "the queries find something in the fixtures";
    // Filters: one seat; one project.
    const std::string seat = "c-7acd37a8-2745-4b58-a8a9-46164b22ad9e";
    auto one = search(hub, "q=the&limit=200&seat=" + seat);
    ASSERT_FALSE(one.at("hits").as_array().empty());
    for (const auto& h : one.at("hits").as_array()) {
        EXPECT_EQ(h.at("seat").as_string(), seat);
    }
    EXPECT_EQ(http("GET", hub.base() + "/v1/search").status, 400U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/search?q=x&limit=0").status, 400U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/search?q=x&since=yesterday").status, 400U);
}

TEST(Search, FindsARowALiveWriterAppendsAndForgetsATruncatedFile) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    SluiceProcess hub(serve_args(data, projects));
    ASSERT_TRUE(eventually([&] { return indexed(hub); }));
    const auto file = projects / "-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl";
    const std::string seat = "c-03eb5929-52b3-4b13-ada3-b93ae35806b8";
    ASSERT_FALSE(all_hits(hub, "Markdown documents").empty());
    const json::object row{
        {"type", "user"},
        {"sessionId", "03eb5929-52b3-4b13-ada3-b93ae35806b8"},
        {"timestamp", "2030-01-01T00:00:00.000Z"},
        {"message",
         json::object{{"role", "user"}, {"content", "please grep for Xylophone42Quux now"}}}};
    const auto appended = std::chrono::steady_clock::now();
    { std::ofstream(file, std::ios::app) << json::serialize(row) << "\n"; }
    ASSERT_TRUE(eventually([&] { return !all_hits(hub, "xylophone42").empty(); }, 5s));
    const auto took = std::chrono::steady_clock::now() - appended;
    EXPECT_LT(took, 3s) << "found after "
                        << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                        << " ms";
    auto hits = all_hits(hub, "xylophone42");
    ASSERT_EQ(hits.size(), 1U);
    EXPECT_EQ(hits.begin()->first, seat);
    auto f = frame_of(hub, seat, hits.begin()->second);
    EXPECT_NE(f.body.find("Xylophone42Quux"), std::string::npos) << f.body;

    // Truncated to a new first prompt: the old hits go, the new text is found.
    const json::object fresh{
        {"type", "user"},
        {"sessionId", "03eb5929-52b3-4b13-ada3-b93ae35806b8"},
        {"message", json::object{{"role", "user"}, {"content", "a brand new Zanzibar prompt"}}}};
    { std::ofstream(file, std::ios::trunc) << json::serialize(fresh) << "\n"; }
    EXPECT_TRUE(eventually(
        [&] {
            return all_hits(hub, "xylophone42").empty()
                   && all_hits(hub, "Markdown documents").empty();
        },
        5s));
    EXPECT_TRUE(eventually(
        [&] {
            return all_hits(hub, "zanzibar")
                   == std::set<std::pair<std::string, std::uint64_t>>{{seat, 0}};
        },
        5s));
}

// A session file longer than a window, never opened: its seat numbers its frames from the
// file's end until it has counted it, while the index numbers them from its start. A hit there
// names its frame by `index` and gives no seq until the seat knows where its numbering starts;
// then the frame fetched by that seq holds the match (and the seq is not the index).
TEST(Search, AHitInALargeNeverOpenedSessionNamesTheFrameTheSeatServesAtThatSeq) {
    TempDir root;
    TempDir data;
    const std::string session = "5f0c2a7e-1111-4222-8333-944455556666";
    const auto projects = fs::path(root.path()) / "projects";
    const auto dir = projects / "-work-big";
    fs::create_directories(dir);
    constexpr int ROWS = 20000; // past the window's 5,000 frames: numbered from the end on open
    {
        std::ofstream out(dir / (session + ".jsonl"));
        for (int i = 0; i < ROWS; ++i) {
            std::string text = "row " + std::to_string(i);
            if (i == 30) {
                text += " EarlyNeedleQuartz";
            } else if (i == ROWS - 10) {
                text += " LateNeedleQuartz";
            }
            const bool user = i % 10 == 0;
            json::object row{
                {"type", user ? "user" : "assistant"},
                {"sessionId", session},
                {"cwd", "/work/big"},
                {"uuid", "u-" + std::to_string(i)},
                {"timestamp", "2026-11-01T10:00:00.000Z"},
                {"message",
                 user ? json::object{{"role", "user"}, {"content", text}}
                      : json::object{
                          {"role", "assistant"},
                          {"content",
                           json::array{json::object{{"type", "text"}, {"text", text}}}}}}};
            out << json::serialize(row) << "\n";
        }
    }
    SluiceProcess hub(serve_args(data, projects));
    ASSERT_TRUE(eventually([&] { return indexed(hub); }, 60s));
    const std::string seat = "c-" + session;
    for (const auto& [q, index] :
         {std::pair<std::string, std::uint64_t>{"EarlyNeedleQuartz", 30},
          std::pair<std::string, std::uint64_t>{"LateNeedleQuartz", ROWS - 10}}) {
        SCOPED_TRACE(q);
        auto r = search(hub, "q=" + q);
        ASSERT_EQ(r.at("hits").as_array().size(), 1U) << r;
        const auto h = r.at("hits").as_array().at(0).as_object();
        EXPECT_EQ(h.at("seat").as_string(), seat);
        EXPECT_EQ(h.at("index").to_number<std::uint64_t>(), index);
        if (index == 30) {
            EXPECT_TRUE(h.at("seq").is_null()) << "never opened: its numbering is not known" << h;
        }
        const auto seq = seq_of(hub, q, h);
        ASSERT_TRUE(seq) << "the seat never said where its numbering starts";
        EXPECT_NE(*seq, index) << "the seat numbers from the file's end: the two differ";
        auto f = frame_of(hub, seat, *seq);
        ASSERT_EQ(f.status, 200U) << f.body;
        EXPECT_NE(f.body.find(q), std::string::npos) << f.body.substr(0, 300);
        // Counted now: the next answer gives the seq at once.
        auto again = search(hub, "q=" + q);
        ASSERT_EQ(again.at("hits").as_array().size(), 1U);
        EXPECT_EQ(again.at("hits").as_array().at(0).at("seq").to_number<std::uint64_t>(), *seq);
    }
}

TEST(Search, FindsAHostedSeatsFramesOnlyForTokensThatMayWatchIt) {
    TempDir data;
    SluiceProcess hub(hub_args(data), true, HubAuth::as_given);
    const auto owner = hub.token();
    ASSERT_FALSE(owner.empty());
    const auto a = new_seat(hub, NewSeat{.name = "a", .agent = {}, .token = owner});
    const auto b = new_seat(hub, NewSeat{.name = "b", .agent = {}, .token = owner});
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    for (const auto& [seat, text] :
         {std::pair{a, "fix the Marmalade migration"}, std::pair{b, "other marmalade words"}}) {
        auto r = http(
            "POST",
            hub.base() + "/v1/seats/" + seat + "/messages",
            json::serialize(json::object{{"text", text}}),
            bearer(owner));
        ASSERT_EQ(r.status, 202U) << r.body;
    }
    std::vector<json::object> raw;
    ASSERT_TRUE(eventually([&] {
        raw.clear();
        auto r = search(hub, "q=marmalade", owner);
        if (!r.contains("hits") || r.at("hits").as_array().size() < 2) {
            return false;
        }
        for (const auto& h : r.at("hits").as_array()) {
            raw.push_back(h.as_object());
        }
        return true;
    }));
    ASSERT_EQ(raw.size(), 2U);
    for (const auto& h : raw) {
        EXPECT_EQ(h.at("seq").to_number<int>(), 0);
        EXPECT_EQ(h.at("turn").to_number<int>(), 1);
        EXPECT_EQ(h.at("source").as_string(), "sluice");
        EXPECT_FALSE(h.at("epoch").as_string().empty());
        EXPECT_FALSE(h.at("archived").as_bool());
    }
    // The scripted turn's tool input and result are found too.
    EXPECT_TRUE(eventually([&] {
        auto r = search(hub, "q=" + encoded("hello from the echo tool") + "&seat=" + a, owner);
        return r.contains("hits") && !r.at("hits").as_array().empty();
    }));

    // A viewer token of seat a finds a's hits only.
    SluiceProcess mint({"token", "new", "--viewer", "--seat", a, "--data", data.path()}, false);
    ASSERT_EQ(mint.wait(20s), 0) << mint.output();
    auto viewer = mint.output();
    viewer.erase(viewer.find_last_not_of('\n') + 1);
    EXPECT_EQ(http("GET", hub.base() + "/v1/search?q=marmalade", {}, bearer(viewer)).status, 403U);
    EXPECT_EQ(
        http("GET", hub.base() + "/v1/search?q=marmalade&seat=" + b, {}, bearer(viewer)).status,
        403U);
    auto mine = search(hub, "q=marmalade&seat=" + a, viewer);
    ASSERT_EQ(mine.at("hits").as_array().size(), 1U);
    EXPECT_EQ(mine.at("hits").as_array()[0].at("seat").as_string(), a);

    // `sluice search` prints the hits.
    SluiceProcess cli({"search", "MARMALADE", "--hub", hub.base(), "--token", owner}, false);
    ASSERT_EQ(cli.wait(20s), 0) << cli.output();
    EXPECT_NE(cli.output().find(a), std::string::npos) << cli.output();
    EXPECT_NE(cli.output().find(b), std::string::npos) << cli.output();
    EXPECT_NE(cli.output().find("[[Marmalade]]"), std::string::npos) << cli.output();

    // A removed seat's hits are gone.
    auto del = http("DELETE", hub.base() + "/v1/seats/" + a, {}, bearer(owner));
    ASSERT_LT(del.status, 300U) << del.body;
    auto after = search(hub, "q=marmalade", owner);
    ASSERT_EQ(after.at("hits").as_array().size(), 1U);
    EXPECT_EQ(after.at("hits").as_array()[0].at("seat").as_string(), b);
}

TEST(Search, RebuildsADeletedIndexAndSaysHowFarItIs) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    std::set<std::pair<std::string, std::uint64_t>> before;
    {
        SluiceProcess hub(serve_args(data, projects));
        ASSERT_TRUE(eventually([&] { return indexed(hub); }));
        before = all_hits(hub, "package");
        ASSERT_FALSE(before.empty());
    }
    for (const auto* suffix : {"", "-wal", "-shm"}) {
        fs::remove(fs::path(data.path()) / (std::string("search.db") + suffix));
    }
    SluiceProcess hub(serve_args(data, projects));
    auto r = search(hub, "q=package");
    ASSERT_TRUE(r.contains("indexing"));
    EXPECT_TRUE(r.at("indexing").at("rebuilt").as_bool());
    ASSERT_TRUE(eventually([&] { return indexed(hub); }));
    EXPECT_EQ(all_hits(hub, "package"), before);
}

} // namespace
