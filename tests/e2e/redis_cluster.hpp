// End-to-end tests of `sluice serve --redis`, shared helpers: node arguments, what a viewer saw.
#pragma once

#include "support/hub_process.hpp"
#include "support/redis_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace sluice::test {

using Events = std::vector<sluice::sse::Event>;

// Skips a test on a machine without redis-server.
#define SKIP_WITHOUT_REDIS()                                                                       \
    if (!have_redis_server()) {                                                                    \
        GTEST_SKIP() << "redis-server is not installed (scripts/install-deps)";                    \
    }

// `serve` on 127.0.0.1:0 as a node on `redis`; `pace` > 0 streams previews over time.
inline std::vector<std::string>
node_args(const TempDir& dir, const std::string& redis, const char* pace = "0") {
    return {
        "serve", "--listen", "127.0.0.1:0", "--data", dir.path(), "--pace", pace, "--redis", redis};
}

// The text of a scripted answer: `bytes` of "word0 word1 …".
inline std::string answer_text(std::size_t bytes) {
    std::string t;
    for (std::size_t i = 0; t.size() < bytes; ++i) {
        t += "word" + std::to_string(i) + " ";
    }
    t.resize(bytes);
    return t;
}

// Writes `<dir>/script.json` (serve --script): every turn answers `text` in 16-byte deltas
// 25 ms apart (at pace 1: 1,600 bytes take ~2.5 s); returns its path.
inline std::string write_answer_script(const TempDir& dir, const std::string& text) {
    boost::json::object round{
        {"events", boost::json::array{boost::json::object{{"text", text}}}},
        {"usage", boost::json::object{{"input", 1}, {"output", 1}}}};
    boost::json::object script{
        {"model", "scripted"},
        {"delay_ms", 25},
        {"chunk_bytes", 16},
        {"rounds", boost::json::array{round}}};
    write_file(dir.file("script.json"), boost::json::serialize(script));
    return dir.file("script.json");
}

inline std::string events_url(const SluiceProcess& hub, const std::string& seat) {
    return hub.base() + "/v1/seats/" + seat + "/events";
}

// Whether node `hub` lists `seat` (the registry reached it).
inline bool lists(const SluiceProcess& hub, const std::string& seat) {
    auto r = http("GET", hub.base() + "/v1/seats");
    if (r.status != 200U || !r.json.is_object()) {
        return false;
    }
    for (const auto& s : r.json.at("seats").as_array()) {
        if (s.at("id").as_string() == seat) {
            return true;
        }
    }
    return false;
}

// Polls `f` every 50 ms until it holds or `t` passed.
inline bool
eventually(const std::function<bool()>& f, std::chrono::milliseconds t = std::chrono::seconds(15)) {
    const auto deadline = std::chrono::steady_clock::now() + t;
    while (!f()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

// The frames a viewer has: a connected's window, then every frame event, as seq → compact JSON.
// Fails (ADD_FAILURE) on a duplicate or a hole.
inline std::map<std::int64_t, std::string> frames_seen(const Events& ev) {
    std::map<std::int64_t, std::string> out;
    std::int64_t next = -1;
    for (const auto& e : ev) {
        if (e.type == "connected") {
            auto v = boost::json::parse(e.data).as_object();
            auto first = v.at("window").at("first").to_number<std::int64_t>();
            out.clear();
            for (const auto& f : v.at("window").at("frames").as_array()) {
                out[first++] = boost::json::serialize(f);
            }
            next = v.at("seq").to_number<std::int64_t>() + 1;
        } else if (e.type == "resumed") {
            next = boost::json::parse(e.data).at("seq").to_number<std::int64_t>() + 1;
        } else if (e.type == "frame") {
            const auto colon = e.id.rfind(':');
            const auto seq = std::stoll(e.id.substr(colon + 1));
            EXPECT_EQ(seq, next) << "a duplicate or a hole at " << e.id;
            out[seq] =
                boost::json::serialize(boost::json::parse(e.data).at("row")); // {"seq","row"}
            next = seq + 1;
        }
    }
    return out;
}

// What a viewer had (`before`) plus what it got after reconnecting (`after`'s frames), each
// frame once: fails (ADD_FAILURE) on a frame sent again.
inline std::map<std::int64_t, std::string>
frames_once(std::map<std::int64_t, std::string> before, const Events& after) {
    for (const auto& [seq, f] : frames_seen(after)) {
        if (before.contains(seq)) {
            ADD_FAILURE() << "frame " << seq << " sent again";
        }
        before[seq] = f;
    }
    return before;
}

// How many events of `type`.
inline std::size_t count_type(const Events& ev, std::string_view type) {
    std::size_t n = 0;
    for (const auto& e : ev) {
        n += e.type == type ? 1U : 0U;
    }
    return n;
}

// The newest event id (the Last-Event-ID a reconnect sends).
inline std::string last_id(const Events& ev) {
    std::string id;
    for (const auto& e : ev) {
        if (!e.id.empty()) {
            id = e.id;
        }
    }
    return id;
}

} // namespace sluice::test
