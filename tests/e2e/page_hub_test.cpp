// End-to-end tests of what the page needs from the hub (issue 16): a viewer joining or resuming
// mid-turn gets the partial message from its first word, Stop keeps what streamed, a seat is
// renamed, the page's files revalidate by ETag. Real binary, real HTTP and SSE on 127.0.0.1.
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

using namespace sluice::test;
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr std::string_view FIRST = "First sentence of the answer. ";

// A turn that streams text until stopped: the first sentence once, then more for ever.
std::string slow_script(const TempDir& dir) {
    const auto file = dir.file("script.json");
    std::ofstream(file) << json::serialize(json::object{
        {"model", "scripted-slow"},
        {"delay_ms", 10},
        {"chunk_bytes", 16},
        {"rounds",
         json::array{json::object{
             {"events",
              json::array{
                  json::object{{"text", std::string(FIRST)}},
                  json::object{{"text", "Then more, and more again. "}, {"repeat", -1}}}}}}}});
    return file;
}

struct Hub {
    TempDir dir;
    SluiceProcess proc;
    std::string seat;

    Hub()
        : proc(
            {"serve",
             "--listen",
             "127.0.0.1:0",
             "--data",
             dir.file("data"),
             "--script",
             slow_script(dir),
             "--pace",
             "1"}) {
        auto r = http("POST", proc.base() + "/v1/seats", R"({"name":"open turn"})");
        EXPECT_EQ(r.status, 201U) << r.body;
        seat = std::string(r.json.at("seat").as_string());
    }

    std::string url(const std::string& tail) const {
        return proc.base() + "/v1/seats/" + seat + tail;
    }
};

// The text previews of `events` after index `from`, joined.
std::string preview_text(const std::vector<sluice::sse::Event>& events, std::size_t from = 0) {
    std::string s;
    for (std::size_t i = from; i < events.size(); ++i) {
        if (events[i].type != "preview") {
            continue;
        }
        const auto d = json::parse(events[i].data);
        if (d.at("kind").as_string() == "text") {
            s += d.at("delta").as_string();
        }
    }
    return s;
}

bool has_gap(const std::vector<sluice::sse::Event>& events) {
    for (const auto& e : events) {
        if (e.type == "gap") {
            return true;
        }
    }
    return false;
}

TEST(OpenTurn, AViewerJoiningMidTurnGetsThePartialMessageFromItsFirstWordAndNothingTwice) {
    Hub hub;
    SseClient first(hub.url("/events"));
    ASSERT_TRUE(first.wait_for([](const auto& ev) { return !ev.empty(); }));
    auto r = http("POST", hub.url("/messages"), R"({"text":"stream for a while"})");
    ASSERT_EQ(r.status, 202U) << r.body;
    ASSERT_TRUE(first.wait_for(
        [](const auto& ev) { return preview_text(ev).find("Then more") != std::string::npos; }));

    SseClient late(hub.url("/events"));
    ASSERT_TRUE(late.wait_for([](const auto& ev) { return !ev.empty(); }));
    const auto hello = late.events().front();
    ASSERT_EQ(hello.type, "connected");
    const auto data = json::parse(hello.data);
    ASSERT_TRUE(data.as_object().contains("partial")) << hello.data;
    const auto& partial = data.at("partial");
    const std::string start(partial.at("text").as_string());
    EXPECT_EQ(start.substr(0, FIRST.size()), FIRST);
    EXPECT_EQ(partial.at("missing_bytes").to_number<std::uint64_t>(), 0U);
    EXPECT_EQ(data.at("state").as_string(), "running");

    // The joiner's partial then its previews are one text, without a repeat: what the first
    // viewer saw, as far as both got.
    ASSERT_TRUE(late.wait_for([](const auto& ev) { return preview_text(ev, 1).size() > 200; }));
    const std::string joined = start + preview_text(late.events(), 1);
    const std::string seen = preview_text(first.events());
    ASSERT_FALSE(has_gap(first.events()));
    ASSERT_FALSE(has_gap(late.events()));
    const auto n = std::min(joined.size(), seen.size());
    EXPECT_EQ(joined.substr(0, n), seen.substr(0, n));

    // Resuming mid-turn with Last-Event-ID gets `resumed` with the partial too.
    SseClient again(hub.url("/events"), hello.id);
    ASSERT_TRUE(again.wait_for([](const auto& ev) { return !ev.empty(); }));
    const auto resumed = again.events().front();
    ASSERT_EQ(resumed.type, "resumed");
    const auto rd = json::parse(resumed.data);
    ASSERT_TRUE(rd.as_object().contains("partial")) << resumed.data;
    EXPECT_EQ(std::string(rd.at("partial").at("text").as_string()).substr(0, FIRST.size()), FIRST);
    (void)http("POST", hub.url("/cancel"), "{}");
}

TEST(OpenTurn, StopKeepsWhatStreamedAsAnInterruptedFrameAndSaysWhoStoppedIt) {
    Hub hub;
    SseClient sub(hub.url("/events"));
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }));
    auto r = http("POST", hub.url("/messages"), R"({"text":"stream, then be stopped"})");
    ASSERT_EQ(r.status, 202U) << r.body;
    const auto turn = r.json.at("turn").to_number<std::uint64_t>();
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return preview_text(ev).size() > 300; }));
    ASSERT_EQ(http("POST", hub.url("/cancel"), "{}").json.at("cancelled").as_bool(), true);
    ASSERT_TRUE(
        sub.wait_for([turn](const auto& ev) { return has_turn_state(ev, turn, "cancelled"); }));

    const auto seen = preview_text(sub.events());
    std::string kept;
    std::string result;
    for (const auto& [seq, row] : frames_of(sub.events())) {
        const auto& o = row.as_object();
        if (o.at("type") == "assistant" && o.contains("interrupted")) {
            EXPECT_TRUE(o.at("interrupted").as_bool());
            kept = std::string(o.at("message").at("content").at(0).at("text").as_string());
        }
        if (o.at("type") == "result") {
            result = std::string(o.at("result").as_string());
        }
    }
    ASSERT_FALSE(kept.empty()) << "no interrupted assistant frame";
    EXPECT_EQ(kept.substr(0, FIRST.size()), FIRST);
    EXPECT_GE(kept.size(), seen.size()); // everything the viewer read is kept
    EXPECT_EQ(kept.substr(0, seen.size()), seen);
    EXPECT_EQ(result, "cancelled by the user");
    for (const auto& e : sub.events()) {
        if (e.type == "turn" && e.data.find("cancelled") != std::string::npos) {
            EXPECT_NE(e.data.find("cancelled by the user"), std::string::npos) << e.data;
        }
    }

    // The transcript keeps it: after a restart, history still holds the interrupted frame.
    EXPECT_EQ(hub.proc.terminate(), 0);
    SluiceProcess again(
        {"serve", "--listen", "127.0.0.1:0", "--data", hub.dir.file("data"), "--pace", "0"});
    auto h = http("GET", again.base() + "/v1/seats/" + hub.seat + "/history");
    ASSERT_EQ(h.status, 200U) << h.body;
    EXPECT_NE(h.body.find(R"("interrupted":true)"), std::string::npos);
    EXPECT_NE(h.body.find(std::string(FIRST)), std::string::npos);
    // And the next turn runs after it (the kept answer is valid history for the next request).
    SseClient tail(again.base() + "/v1/seats/" + hub.seat + "/events");
    ASSERT_TRUE(tail.wait_for([](const auto& ev) { return !ev.empty(); }));
    auto next =
        http("POST", again.base() + "/v1/seats/" + hub.seat + "/messages", R"({"text":"go on"})");
    ASSERT_EQ(next.status, 202U) << next.body;
    const auto t2 = next.json.at("turn").to_number<std::uint64_t>();
    EXPECT_TRUE(tail.wait_for([t2](const auto& ev) { return has_turn_state(ev, t2, "ended"); }));
}

} // namespace

TEST(SeatName, ASeatIsRenamedWithPatchKeptAcrossARestartAndBadNamesAreRefused) {
    TempDir dir;
    std::vector<std::string> args{
        "serve", "--listen", "127.0.0.1:0", "--data", dir.file("data"), "--pace", "0"};
    std::string seat;
    {
        SluiceProcess hub(args);
        auto r = http("POST", hub.base() + "/v1/seats", R"({"name":"first name"})");
        ASSERT_EQ(r.status, 201U) << r.body;
        seat = std::string(r.json.at("seat").as_string());
        const auto url = hub.base() + "/v1/seats/" + seat;
        auto p = http("PATCH", url, R"({"name":"a better name"})");
        ASSERT_EQ(p.status, 200U) << p.body;
        EXPECT_EQ(p.json.at("name").as_string(), "a better name");
        EXPECT_EQ(http("GET", url).json.at("name").as_string(), "a better name");
        EXPECT_EQ(http("PATCH", url, R"({"name":""})").status, 400U);
        EXPECT_EQ(http("PATCH", url, R"({"name":7})").status, 400U);
        EXPECT_EQ(http("PATCH", url, R"({})").status, 400U);
        EXPECT_EQ(http("PATCH", url, R"({"name":"a\nb"})").status, 400U);
        const auto long_name = http("PATCH", url, R"({"name":")" + std::string(201, 'x') + "\"}");
        EXPECT_EQ(long_name.status, 400U);
        EXPECT_NE(long_name.body.find("200"), std::string::npos) << long_name.body;
        EXPECT_EQ(http("PATCH", hub.base() + "/v1/seats/nope", R"({"name":"x"})").status, 404U);
        EXPECT_EQ(hub.terminate(), 0);
    }
    SluiceProcess again(args);
    EXPECT_EQ(
        http("GET", again.base() + "/v1/seats/" + seat).json.at("name").as_string(),
        "a better name");
}

TEST(WebAssets, AreServedWithAStrongETagAndRevalidateWith304) {
    TempDir dir;
    SluiceProcess hub(
        {"serve", "--listen", "127.0.0.1:0", "--data", dir.file("data"), "--pace", "0"});
    for (const std::string path : {"/", "/app.js", "/style.css"}) {
        auto first = http("GET", hub.base() + path);
        ASSERT_EQ(first.status, 200U) << path;
        ASSERT_FALSE(first.body.empty());
        const auto etag = first.header("ETag");
        ASSERT_EQ(etag.size(), 18U) << path << ": " << etag; // "<16 hex digits>"
        EXPECT_EQ(first.header("Cache-Control"), "no-cache");
        auto again = http("GET", hub.base() + path, {}, {{"If-None-Match", etag}});
        EXPECT_EQ(again.status, 304U) << path;
        EXPECT_TRUE(again.body.empty());
        auto stale =
            http("GET", hub.base() + path, {}, {{"If-None-Match", "\"0000000000000000\""}});
        EXPECT_EQ(stale.status, 200U) << path;
        EXPECT_EQ(stale.body, first.body);
    }
    EXPECT_NE(
        http("GET", hub.base() + "/app.js").header("ETag"),
        http("GET", hub.base() + "/style.css").header("ETag"));
}
