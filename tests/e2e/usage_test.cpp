// End to end: GET /v1/usage against an oracle — `ccusage session --json --offline` (npm ccusage
// 20.0.24, tools/ccusage) over a Claude Code projects tree built from ../shared/fixtures, and the
// real hub serving the same tree with --claude-projects; a hosted seat's turn totals; /metrics;
// a viewer token's scope; the price table from --prices.
#include "e2e/claude_tree.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

namespace {

using namespace sluice::test;
using namespace sluice::test::claude_tree;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// `<root>/.claude/projects`, built.
fs::path build_projects(const fs::path& root) {
    const auto projects = root / ".claude" / "projects";
    build_fixture_tree(projects);
    return projects;
}

// `ccusage session --json --offline` over `<root>/.claude` (HOME and CLAUDE_CONFIG_DIR there).
json::object ccusage_sessions(const fs::path& root) {
    const std::string bin =
        std::string(SLUICE_SOURCE_DIR) + "/tools/ccusage/node_modules/.bin/ccusage";
    EXPECT_EQ(::access(bin.c_str(), X_OK), 0)
        << bin << " is missing: run scripts/install-deps (npm ci in tools/ccusage)";
    const std::string cmd = "cd '" + root.string() + "' && HOME='" + root.string()
                            + "' CLAUDE_CONFIG_DIR='" + (root / ".claude").string()
                            + "' NO_COLOR=1 '" + bin + "' session --json --offline 2>/dev/null";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return {};
    }
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
        out.append(buf.data(), n);
    }
    EXPECT_EQ(::pclose(p), 0) << out;
    boost::system::error_code ec;
    auto v = json::parse(out, ec);
    EXPECT_FALSE(ec) << out;
    return v.is_object() ? v.as_object() : json::object{};
}

// GET /v1/usage?<query> rows by key.
std::map<std::string, json::object>
usage_rows(const SluiceProcess& hub, const std::string& query, const std::string& token = {}) {
    auto r = http(
        "GET",
        hub.base() + "/v1/usage?" + query,
        {},
        token.empty() ? decltype(bearer(token)){} : bearer(token));
    EXPECT_EQ(r.status, 200U) << r.body;
    std::map<std::string, json::object> out;
    if (r.status == 200) {
        for (const auto& row : r.json.at("rows").as_array()) {
            out[std::string(row.at("key").as_string())] = row.as_object();
        }
    }
    return out;
}

std::int64_t num(const json::object& o, const char* k) {
    return o.at(k).to_number<std::int64_t>();
}

TEST(Usage, AgreesWithCcusageOnEverySessionOfAProjectsTree) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    const auto oracle = ccusage_sessions(root.path());
    ASSERT_TRUE(oracle.contains("session"));
    const auto& sessions = oracle.at("session").as_array();
    ASSERT_GE(sessions.size(), 14U) << json::serialize(oracle);

    SluiceProcess hub(serve_args(data, projects));
    // The hub counts in the background: wait (bounded) until every session the oracle names has
    // its tokens, then compare.
    const auto matches = [&](const std::map<std::string, json::object>& rows) {
        for (const auto& s : sessions) {
            const auto id = "c-" + std::string(s.at("period").as_string());
            const auto it = rows.find(id);
            if (it == rows.end()
                || num(it->second, "total_tokens")
                       != s.at("totalTokens").to_number<std::int64_t>()) {
                return false;
            }
        }
        return true;
    };
    auto rows = usage_rows(hub, "group=seat");
    for (int i = 0; i < 300 && !matches(rows); ++i) {
        std::this_thread::sleep_for(100ms);
        rows = usage_rows(hub, "group=seat");
    }
    std::size_t priced = 0;
    for (const auto& s : sessions) {
        const auto period = std::string(s.at("period").as_string());
        SCOPED_TRACE(period);
        const auto it = rows.find("c-" + period);
        ASSERT_NE(it, rows.end()) << "the hub has no usage for a session ccusage counts";
        const auto& ours = it->second;
        EXPECT_EQ(num(ours, "input_tokens"), s.at("inputTokens").to_number<std::int64_t>());
        EXPECT_EQ(num(ours, "output_tokens"), s.at("outputTokens").to_number<std::int64_t>());
        EXPECT_EQ(
            num(ours, "cache_read_tokens"), s.at("cacheReadTokens").to_number<std::int64_t>());
        EXPECT_EQ(
            num(ours, "cache_write_tokens"), s.at("cacheCreationTokens").to_number<std::int64_t>());
        const bool they_price =
            !s.as_object().contains("missingPricing") && s.at("totalCost").to_number<double>() > 0;
        if (!ours.at("cost_usd").is_null() && they_price) {
            const auto theirs = s.at("totalCost").to_number<double>();
            EXPECT_LE(std::abs(ours.at("cost_usd").to_number<double>() - theirs), 0.01 * theirs)
                << "ours " << ours.at("cost_usd") << ", ccusage " << theirs;
            ++priced;
        }
    }
    EXPECT_GE(priced, 13U) << "every session but the one whose model the table lacks is priced";
    // Nothing counted that ccusage does not count.
    EXPECT_EQ(rows.size(), sessions.size());
    // The one model the shipped table lacks: tokens, and no cost rather than a guess.
    const auto models = usage_rows(hub, "group=model");
    ASSERT_TRUE(models.contains("claude-sonnet-4"));
    EXPECT_TRUE(models.at("claude-sonnet-4").at("cost_usd").is_null());
    EXPECT_EQ(num(models.at("claude-sonnet-4"), "unpriced_tokens"), 253);
    // Projects: the sessions' working directories.
    EXPECT_GE(usage_rows(hub, "group=project").size(), 5U);
    // /metrics: tokens by kind and model, cost by model.
    auto metrics = http("GET", hub.base() + "/metrics");
    EXPECT_NE(
        metrics.body.find("sluice_tokens_total{kind=\"output\",model=\"claude-opus-4-7\"} "),
        std::string::npos);
    EXPECT_NE(
        metrics.body.find("sluice_cost_usd_total{model=\"claude-opus-4-7\"} "), std::string::npos);
    EXPECT_EQ(
        metrics.body.find("sluice_cost_usd_total{model=\"claude-sonnet-4\"}"), std::string::npos);
}

TEST(Usage, CountsRowsAppendedToASessionAndFiltersByDay) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    SluiceProcess hub(serve_args(data, projects));
    const std::string seat = "c-8aa54c1d-5030-4491-be42-e0c416424b8a";
    const auto output_of = [&] {
        auto rows = usage_rows(hub, "group=seat&seat=" + seat);
        return rows.contains(seat) ? num(rows.at(seat), "output_tokens") : -1;
    };
    for (int i = 0; i < 200 && output_of() != 15; ++i) {
        std::this_thread::sleep_for(50ms);
    }
    ASSERT_EQ(output_of(), 15);
    const json::object row{
        {"type", "assistant"},
        {"timestamp", "2030-01-01T00:00:00.000Z"},
        {"sessionId", "8aa54c1d-5030-4491-be42-e0c416424b8a"},
        {"requestId", "req_appended"},
        {"message",
         json::object{
             {"id", "msg_appended"},
             {"model", "claude-haiku-4-5-20251001"},
             {"usage", json::object{{"input_tokens", 1}, {"output_tokens", 1000}}}}}};
    {
        std::ofstream(
            projects / "-capture-vyPJVq/8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl", std::ios::app)
            << json::serialize(row) << "\n";
    }
    for (int i = 0; i < 200 && output_of() != 1015; ++i) {
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(output_of(), 1015);
    const auto days = usage_rows(hub, "group=day&since=2030-01-01&until=2030-12-31");
    ASSERT_EQ(days.size(), 1U);
    EXPECT_EQ(num(days.at("2030-01-01"), "output_tokens"), 1000);
    EXPECT_EQ(http("GET", hub.base() + "/v1/usage?group=week").status, 400U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/usage?since=yesterday").status, 400U);
    EXPECT_EQ(http("POST", hub.base() + "/v1/usage", "{}").status, 405U);
}

TEST(Usage, CountsAHostedSeatsTurnsAndPricesThemFromThePricesFile) {
    TempDir data;
    const auto prices = fs::path(data.path()) / "prices.json";
    put(prices,
        R"({"date":"2026-12-05","source":"a test","models":{"scripted-demo":)"
        R"({"input_cost_per_token":0.001,"output_cost_per_token":0.01}}})");
    SluiceProcess hub(hub_args(data, {"--prices", prices.string()}));
    const auto seat = new_seat(hub);
    ASSERT_FALSE(seat.empty());
    ASSERT_EQ(send(hub, seat, "hello"), 1U);
    std::map<std::string, json::object> rows;
    for (int i = 0; i < 200 && !rows.contains(seat); ++i) {
        std::this_thread::sleep_for(50ms);
        rows = usage_rows(hub, "group=seat");
    }
    ASSERT_TRUE(rows.contains(seat));
    // The built-in script's two rounds: 120 + 210 in, 64 + 48 out.
    EXPECT_EQ(num(rows.at(seat), "input_tokens"), 330);
    EXPECT_EQ(num(rows.at(seat), "output_tokens"), 112);
    EXPECT_NEAR(rows.at(seat).at("cost_usd").to_number<double>(), 0.33 + 1.12, 1e-9);
    auto r = http("GET", hub.base() + "/v1/usage");
    EXPECT_EQ(r.json.at("prices").at("source").as_string(), "a test");
}

TEST(Usage, AViewerTokenSeesOnlyItsSeatsUsage) {
    TempDir root;
    TempDir data;
    const auto projects = build_projects(root.path());
    SluiceProcess hub(serve_args(data, projects), true, HubAuth::as_given);
    const std::string seat = "c-8aa54c1d-5030-4491-be42-e0c416424b8a";
    SluiceProcess mint({"token", "new", "--viewer", "--seat", seat, "--data", data.path()}, false);
    ASSERT_EQ(mint.wait(20s), 0) << mint.output();
    auto viewer = mint.output();
    viewer.erase(viewer.find_last_not_of('\n') + 1);
    ASSERT_EQ(viewer.size(), 64U) << viewer;
    EXPECT_EQ(http("GET", hub.base() + "/v1/usage", {}, bearer(viewer)).status, 403U);
    EXPECT_EQ(
        http(
            "GET",
            hub.base() + "/v1/usage?seat=c-fe869ecb-c176-478f-9734-7e4b8ef12cff",
            {},
            bearer(viewer))
            .status,
        403U);
    auto mine = usage_rows(hub, "group=model&seat=" + seat, viewer);
    for (int i = 0; i < 200 && mine.empty(); ++i) {
        std::this_thread::sleep_for(50ms);
        mine = usage_rows(hub, "group=model&seat=" + seat, viewer);
    }
    EXPECT_EQ(mine.size(), 1U);
    EXPECT_TRUE(mine.contains("claude-haiku-4-5-20251001"));
    EXPECT_GE(usage_rows(hub, "group=seat", hub.token()).size(), 2U) << "the owner sees every seat";
}

} // namespace
