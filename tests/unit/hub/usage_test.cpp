// Tests of hub/usage.hpp and hub/usage_ledger.hpp: prices, ccusage's counting rules one by one,
// real sessions against the figures ccusage 20.0.24 gives for them, result rows, the ledger.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/usage.hpp>
#include <sluice/hub/usage_ledger.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::hub {
namespace {

namespace json = boost::json;
using sluice::test::fixture_path;
using sluice::test::slurp;

// An assistant row of Claude Code's shape.
std::string
row(const std::string& id,
    const std::string& request,
    std::int64_t output,
    const std::string& ts = "2026-01-02T03:04:05.000Z",
    const std::string& model = "claude-sonnet-4-20250514",
    const std::string& extra = "") {
    json::object usage{
        {"input_tokens", 10},
        {"output_tokens", output},
        {"cache_read_input_tokens", 100},
        {"cache_creation_input_tokens", 20}};
    json::object o{
        {"type", "assistant"},
        {"timestamp", ts},
        {"sessionId", "s1"},
        {"version", "2.1.29"},
        {"message",
         json::object{
             {"id", id}, {"model", model}, {"role", "assistant"}, {"usage", std::move(usage)}}}};
    if (!request.empty()) {
        o["requestId"] = request;
    }
    auto text = json::serialize(o);
    if (!extra.empty()) {
        text.insert(text.size() - 1, "," + extra);
    }
    return text;
}

struct Totals {
    UsageTokens tokens;
    double cost{};
    std::int64_t unpriced{};
};

Totals count(const std::vector<std::string>& lines) {
    ClaudeUsageCounter c(PriceTable::shipped(), "s1");
    std::vector<UsageDelta> out;
    for (const auto& l : lines) {
        c.line(l, out);
    }
    Totals t;
    for (const auto& d : out) {
        t.tokens += d.tokens;
        t.cost += d.cost_usd;
        t.unpriced += d.unpriced_tokens;
    }
    return t;
}

TEST(PriceTable, ShipsADatedTableThatPricesClaudeModels) {
    const auto t = PriceTable::shipped();
    EXPECT_FALSE(t->date().empty());
    EXPECT_NE(t->source().find("LiteLLM"), std::string::npos);
    MessageTokens m;
    m.tokens = {1000, 1000, 1000, 1000};
    // Sonnet 4: $3 in, $15 out, $0.30 a cache read, $3.75 a 5-minute cache write, per MTok.
    EXPECT_NEAR(*t->cost("claude-sonnet-4-20250514", m), 0.003 + 0.015 + 0.0003 + 0.00375, 1e-12);
    // Beyond 200,000 tokens of one kind in one message, the long-context rates.
    m.tokens = {1'000'000, 1'000'000, 1'000'000, 1'000'000};
    EXPECT_NEAR(
        *t->cost("claude-sonnet-4-20250514", m),
        (0.6 + 4.8) + (3 + 18) + (0.75 + 6) + (0.06 + 0.48),
        1e-9);
    EXPECT_FALSE(t->cost("some-model-nobody-prices", m).has_value());
    EXPECT_TRUE(t->cost("anthropic/claude-haiku-4-5", m).has_value());
}

TEST(PriceTable, PricesOneHourCacheWritesAtTwiceTheInputPrice) {
    const auto t = PriceTable::shipped();
    MessageTokens five;
    five.tokens.cache_write = 1000;
    MessageTokens hour = five;
    hour.cache_write_1h = 1000;
    EXPECT_NEAR(*t->cost("claude-haiku-4-5", five), 1000 * 1.25e-6, 1e-12);
    EXPECT_NEAR(*t->cost("claude-haiku-4-5", hour), 1000 * 2e-6, 1e-12);
}

TEST(PriceTable, RefusesATableWithoutDateOrSource) {
    std::string why;
    EXPECT_FALSE(PriceTable::parse(R"({"models":{}})", why));
    EXPECT_NE(why.find("date"), std::string::npos);
    EXPECT_FALSE(PriceTable::parse(R"({"date":"d","source":"s","models":{"m":{}}})", why));
    EXPECT_TRUE(PriceTable::parse(
        R"({"date":"d","source":"s",)"
        R"("models":{"m":{"input_cost_per_token":1,"output_cost_per_token":2}}})",
        why));
}

TEST(ClaudeUsageCounter, CountsAStreamedMessageOnceWithItsLastRowsTokens) {
    const auto t =
        count({row("msg_1", "req_1", 1), row("msg_1", "req_1", 7), row("msg_1", "req_1", 50)});
    EXPECT_EQ(t.tokens.output, 50);
    EXPECT_EQ(t.tokens.input, 10);
    EXPECT_EQ(t.tokens.cache_read, 100);
    EXPECT_EQ(t.tokens.cache_write, 20);
    EXPECT_NEAR(t.cost, 10 * 3e-6 + 50 * 15e-6 + 100 * 3e-7 + 20 * 3.75e-6, 1e-12);
}

TEST(ClaudeUsageCounter, CountsAnotherRequestOfTheSameMessageAgain) {
    const auto t = count(
        {row("msg_1", "req_1", 5, "2026-01-02T03:04:05.000Z"),
         row("msg_1", "req_2", 5, "2026-01-02T03:04:06.000Z")});
    EXPECT_EQ(t.tokens.output, 10);
}

TEST(ClaudeUsageCounter, DropsASidechainReplayOfAMessageAndPrefersTheMainRow) {
    const auto replay =
        row("msg_1",
            "req_side",
            5,
            "2026-01-02T03:04:05.000Z",
            "claude-sonnet-4-20250514",
            R"("isSidechain":true)");
    // The replay first, then the main row with fewer tokens: the main row wins anyway.
    const auto t = count({replay, row("msg_1", "req_1", 3)});
    EXPECT_EQ(t.tokens.output, 3);
    // The main row first: the replay (another request id, same time) is not counted.
    EXPECT_EQ(count({row("msg_1", "req_1", 3), replay}).tokens.output, 3);
    // A sidechain row of its own message counts.
    EXPECT_EQ(
        count({row("msg_1", "req_1", 3),
               row("msg_2",
                   "req_2",
                   4,
                   "2026-01-02T03:04:05.000Z",
                   "claude-sonnet-4-20250514",
                   R"("isSidechain":true)")})
            .tokens.output,
        7);
}

TEST(ClaudeUsageCounter, KeepsTheFirstRowOnATieAndUsesTheRowsOwnCost) {
    const auto t = count(
        {row("msg_1", "req_1", 5, "2026-01-02T03:04:05.000Z", "m", R"("costUSD":0.5)"),
         row("msg_1", "req_1", 5, "2026-01-02T03:04:05.000Z", "m", R"("costUSD":0.9)")});
    EXPECT_DOUBLE_EQ(t.cost, 0.5);
    EXPECT_EQ(t.unpriced, 0) << "a row's own cost prices a model the table does not know";
}

TEST(ClaudeUsageCounter, LeavesAnUnknownModelUnpricedNeverGuessed) {
    const auto t = count({row("msg_1", "req_1", 5, "2026-01-02T03:04:05.000Z", "claude-sonnet-4")});
    EXPECT_EQ(t.tokens.total(), 135);
    EXPECT_EQ(t.unpriced, 135);
    EXPECT_EQ(t.cost, 0);
}

TEST(ClaudeUsageCounter, SkipsTheRowsCcusageSkips) {
    EXPECT_EQ(
        count({row("msg_1", "req_1", 5, "2026-01-02T03:04:05.000Z", "m", R"("cwd":null)")})
            .tokens.total(),
        0);
    EXPECT_EQ(count({row("", "req_1", 5)}).tokens.total(), 0) << "an empty message id";
    EXPECT_EQ(count({row("msg_1", "req_1", 5, "yesterday")}).tokens.total(), 0);
    auto bad_version = row("msg_1", "req_1", 5);
    bad_version.replace(bad_version.find("2.1.29"), 6, "dev");
    EXPECT_EQ(count({bad_version}).tokens.total(), 0);
    EXPECT_EQ(
        count({R"({"type":"user","timestamp":"2026-01-02T03:04:05Z",)"
               R"("toolUseResult":{"usage":{"input_tokens":5}}})"})
            .tokens.total(),
        0);
    // A row without a message id is counted each time (nothing tells its copies apart).
    std::string no_id = row("x", "req_1", 5);
    no_id.replace(no_id.find(R"("id":"x",)"), 9, "");
    EXPECT_EQ(count({no_id, no_id}).tokens.output, 10);
}

TEST(ClaudeUsageCounter, RemembersABoundedNumberOfMessages) {
    ClaudeUsageCounter c(PriceTable::shipped(), "s1");
    std::vector<UsageDelta> out;
    for (std::size_t i = 0; i < 3 * USAGE_DEDUP_WINDOW; ++i) {
        c.line(row("msg_" + std::to_string(i), "req", 1), out);
        ASSERT_LE(c.remembered(), USAGE_DEDUP_WINDOW);
    }
    EXPECT_EQ(out.size(), 3 * USAGE_DEDUP_WINDOW);
    c.trim(USAGE_DEDUP_IDLE);
    EXPECT_EQ(c.remembered(), USAGE_DEDUP_IDLE);
}

// Real sessions, line by line, against `ccusage session --json --offline` (20.0.24) over them:
// tokens exactly, cost to 1e-9 (the same prices).
struct Expected {
    const char* fixture;
    UsageTokens tokens;
    double cost;
};

TEST(ClaudeUsageCounter, AgreesWithCcusageOnRealSessions) {
    const std::vector<Expected> cases{
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-Users-dain-workspace-claude-code-log-sample_fe869ecb-c176-"
         "478f-9734-7e4b8ef12cff.jsonl",
         {279, 2201, 1164952, 83966},
         0.6982101000000001},
        {"alfredjeanlab_claudeless/"
         "tests_fixtures_v2.1.29_compact-command.projects_-private-var-folders-t5-"
         "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a."
         "jsonl",
         {20, 15, 30657, 5494},
         0.014148699999999998}, // every cache write a 1-hour one: 2 × input
    };
    for (const auto& e : cases) {
        const auto lines = sluice::test::read_lines(fixture_path(e.fixture));
        ASSERT_FALSE(lines.empty()) << e.fixture;
        const auto t = count(lines);
        EXPECT_EQ(t.tokens.input, e.tokens.input) << e.fixture;
        EXPECT_EQ(t.tokens.output, e.tokens.output) << e.fixture;
        EXPECT_EQ(t.tokens.cache_read, e.tokens.cache_read) << e.fixture;
        EXPECT_EQ(t.tokens.cache_write, e.tokens.cache_write) << e.fixture;
        EXPECT_NEAR(t.cost, e.cost, 1e-9) << e.fixture;
        EXPECT_EQ(t.unpriced, 0) << e.fixture;
    }
}

TEST(UsageOfResultRow, TakesClaudesPerModelFiguresAndCosts) {
    auto r = json::parse(R"({"type":"result","total_cost_usd":0.75,
        "usage":{"input_tokens":1,"output_tokens":2},
        "modelUsage":{"claude-opus-4-7":{"inputTokens":10,"outputTokens":20,
            "cacheReadInputTokens":30,"cacheCreationInputTokens":40,"costUSD":0.5},
          "claude-haiku-4-5":{"inputTokens":1,"outputTokens":2,"costUSD":0.25}}})")
                 .as_object();
    const auto d = usage_of_result_row(r, "", "2026-01-02", *PriceTable::shipped());
    ASSERT_EQ(d.size(), 2U); // in the row's order
    EXPECT_EQ(d[0].model, "claude-opus-4-7");
    EXPECT_EQ(d[0].tokens.total(), 100);
    EXPECT_DOUBLE_EQ(d[0].cost_usd, 0.5);
    EXPECT_EQ(d[1].model, "claude-haiku-4-5");
    EXPECT_DOUBLE_EQ(d[1].cost_usd, 0.25);
    EXPECT_EQ(d[1].day, "2026-01-02");
}

TEST(UsageOfResultRow, PricesABuiltinTurnFromTheTableOrNotAtAll) {
    auto r = json::parse(R"({"type":"result","model":"claude-haiku-4-5",
        "usage":{"input_tokens":1000,"output_tokens":100}})")
                 .as_object();
    auto d = usage_of_result_row(r, "", "2026-01-02", *PriceTable::shipped());
    ASSERT_EQ(d.size(), 1U);
    EXPECT_NEAR(d[0].cost_usd, 1000 * 1e-6 + 100 * 5e-6, 1e-12);
    r.erase("model");
    d = usage_of_result_row(r, "scripted", "2026-01-02", *PriceTable::shipped());
    ASSERT_EQ(d.size(), 1U);
    EXPECT_EQ(d[0].model, "scripted");
    EXPECT_EQ(d[0].unpriced_tokens, 1100);
    r["type"] = "assistant";
    EXPECT_TRUE(usage_of_result_row(r, "", "2026-01-02", *PriceTable::shipped()).empty());
}

TEST(UsageLedger, GroupsFiltersAndTakesBack) {
    UsageLedger l;
    const auto delta = [](const char* day,
                          const char* model,
                          std::int64_t in,
                          double cost,
                          std::int64_t unpriced = 0) {
        UsageDelta d;
        d.day = day;
        d.model = model;
        d.tokens.input = in;
        d.cost_usd = cost;
        d.unpriced_tokens = unpriced;
        return d;
    };
    l.add("a", delta("2026-01-01", "m1", 10, 1.0));
    l.add("a", delta("2026-01-02", "m2", 20, 0, 20));
    l.add("b", delta("2026-01-02", "m1", 5, 0.5));
    l.set_project("a", "/p");
    const auto seats = l.query(UsageGroup::seat);
    ASSERT_EQ(seats.size(), 2U);
    EXPECT_EQ(seats[0].key, "a");
    EXPECT_EQ(seats[0].sums.tokens.input, 30);
    EXPECT_FALSE(seats[0].sums.cost().has_value()) << "m2 has no price: the total is unknown";
    EXPECT_EQ(seats[0].sums.unpriced_models, std::set<std::string>{"m2"});
    EXPECT_DOUBLE_EQ(*seats[1].sums.cost(), 0.5);
    const auto models = l.query(UsageGroup::model, "2026-01-02", "2026-01-02");
    ASSERT_EQ(models.size(), 2U);
    EXPECT_EQ(models[0].sums.tokens.input, 5) << "m1 on the 2nd only";
    const auto projects = l.query(UsageGroup::project);
    ASSERT_EQ(projects.size(), 2U);
    EXPECT_EQ(projects[0].key, "");
    EXPECT_EQ(projects[1].key, "/p");
    EXPECT_EQ(l.query(UsageGroup::day, {}, {}, std::string_view("b")).size(), 1U);
    auto back = delta("2026-01-02", "m1", -5, -0.5);
    l.add("b", back);
    EXPECT_EQ(l.query(UsageGroup::seat).size(), 1U) << "a cell taken back whole is gone";
    EXPECT_EQ(l.cells(), 2U);
}

} // namespace
} // namespace sluice::hub
