// End-to-end tests of budgets (issue 29) with the real `sluice serve`: a builtin seat's turn ends
// at its budget_usd with Claude Code's `error_max_budget_usd` result row, the next prompt is
// refused with 409 until the budget is raised, 80 % spent says so in a notice row, what a seat
// spent survives a restart, the hub's daily budget holds over every seat, and a claude seat is
// started with `--max-budget-usd` set to what is left (and again when its budget changes).
#include "support/files.hpp"
#include "support/hub_process.hpp"
#include "support/push_service.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

namespace json = boost::json;
using namespace sluice::test;
using namespace std::chrono_literals;

// $0.001 an input token and $0.01 an output token for the scripted provider's model: its built-in
// script's two rounds (120 in + 64 out, then 210 in + 48 out) cost $0.76 and $0.69.
std::string prices(const TempDir& dir) {
    const auto file = dir.file("prices.json");
    std::ofstream(file) << R"({"date":"2026-12-05","source":"a test","models":{"scripted-demo":)"
                        << R"({"input_cost_per_token":0.001,"output_cost_per_token":0.01}}})";
    return file;
}

Reply post_json(const SluiceProcess& hub, const std::string& path, const json::object& body) {
    return http(
        "POST", hub.base() + path, json::serialize(body), {{"Content-Type", "application/json"}});
}

Reply patch_json(const SluiceProcess& hub, const std::string& path, const json::object& body) {
    return http(
        "PATCH", hub.base() + path, json::serialize(body), {{"Content-Type", "application/json"}});
}

std::string seat_with_budget(const SluiceProcess& hub, double usd) {
    auto r = post_json(hub, "/v1/seats", {{"name", "budgeted"}, {"budget_usd", usd}});
    EXPECT_EQ(r.status, 201U) << r.body;
    return r.status == 201 ? std::string(r.json.at("seat").as_string()) : std::string();
}

// The frames of `text`'s turn; with `notice`, also the notice row that follows its result.
std::vector<json::value> turn_rows(
    const SluiceProcess& hub,
    const std::string& seat,
    const std::string& text,
    bool notice = false) {
    if (!notice) {
        return turn_frames(hub, seat, text);
    }
    return turn_frames(hub, seat, text, [](const auto& ev) {
        for (const auto& [seq, row] : frames_of(ev)) {
            if (row.at("type") == "system" && row.at("subtype") == "notice") {
                return true;
            }
        }
        return false;
    });
}

const json::object* last_of(const std::vector<json::value>& rows, std::string_view type) {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        if (const auto& t = it->at("type"); t.is_string() && t.get_string() == type) {
            return &it->as_object();
        }
    }
    return nullptr;
}

double spent(const SluiceProcess& hub, const std::string& seat) {
    return http("GET", hub.base() + "/v1/seats/" + seat).json.at("spent_usd").to_number<double>();
}

TEST(Budget, ABuiltinTurnEndsAtItsBudgetAndTheNextPromptIsRefusedUntilItIsRaised) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--prices", prices(dir)}));
    const auto seat = seat_with_budget(hub, 0.5);
    ASSERT_FALSE(seat.empty());
    const auto listed = http("GET", hub.base() + "/v1/seats/" + seat).json;
    EXPECT_EQ(listed.at("budget_usd").to_number<double>(), 0.5);
    EXPECT_EQ(listed.at("spent_usd").to_number<double>(), 0.0);

    // The first response costs $0.76, past $0.50: the turn ends there, before the second.
    const auto rows = turn_rows(hub, seat, "hello");
    const auto* result = last_of(rows, "result");
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(result->at("subtype"), "error_max_budget_usd");
    EXPECT_EQ(result->at("is_error"), true);
    EXPECT_EQ(result->at("terminal_reason"), "budget_exhausted");
    EXPECT_EQ(result->at("errors").as_array().at(0), "Reached maximum budget ($0.50)");
    EXPECT_EQ(result->at("num_turns").to_number<int>(), 1) << "one response, not two";
    EXPECT_EQ(result->at("usage").at("input_tokens").to_number<int>(), 120);
    EXPECT_NEAR(spent(hub, seat), 0.76, 1e-9);

    // Spent: the next prompt is refused, saying which budget and how to raise it.
    auto refused = post_json(hub, "/v1/seats/" + seat + "/messages", {{"text", "more"}});
    EXPECT_EQ(refused.status, 409U) << refused.body;
    EXPECT_NE(refused.body.find("this seat's budget is spent: $0.76 of $0.50"), std::string::npos)
        << refused.body;
    EXPECT_NE(refused.body.find("budget_usd"), std::string::npos);

    // Raised by PATCH: it runs again (and a bad amount changes nothing).
    EXPECT_EQ(patch_json(hub, "/v1/seats/" + seat, {{"budget_usd", -1}}).status, 400U);
    auto raised = patch_json(hub, "/v1/seats/" + seat, {{"budget_usd", 10}});
    EXPECT_EQ(raised.status, 200U) << raised.body;
    EXPECT_EQ(raised.json.at("budget_usd").to_number<double>(), 10.0);
    const auto again = turn_rows(hub, seat, "again");
    ASSERT_NE(last_of(again, "result"), nullptr);
    EXPECT_EQ(last_of(again, "result")->at("subtype"), "success");
    EXPECT_NEAR(spent(hub, seat), 0.76 + 1.45, 1e-9);

    // Removed (null): no limit of its own.
    auto removed = patch_json(hub, "/v1/seats/" + seat, {{"budget_usd", nullptr}});
    EXPECT_EQ(removed.status, 200U);
    EXPECT_TRUE(removed.json.at("budget_usd").is_null());
}

TEST(Budget, EightyPercentSpentIsANoticeAndTheSpendSurvivesARestart) {
    TempDir dir;
    const auto table = prices(dir);
    std::string seat;
    {
        SluiceProcess hub(hub_args(dir, {"--prices", table}));
        seat = seat_with_budget(hub, 1.8);
        ASSERT_FALSE(seat.empty());
        // $1.45 of $1.80: past 80 % ($1.44), within the budget (the turn ends as it would).
        const auto rows = turn_rows(hub, seat, "hello", /*more=*/true);
        ASSERT_NE(last_of(rows, "result"), nullptr);
        EXPECT_EQ(last_of(rows, "result")->at("subtype"), "success");
        const auto* notice = last_of(rows, "system");
        ASSERT_NE(notice, nullptr);
        EXPECT_EQ(notice->at("subtype"), "notice");
        EXPECT_EQ(
            notice->at("text"),
            "$1.45 of this seat's budget of $1.80 spent (80 % reached; budget_usd raises it)");
        EXPECT_EQ(notice->at("budget").at("budget_usd").to_number<double>(), 1.8);
        EXPECT_EQ(hub.terminate(), 0);
    }
    // What it spent is in its meta.json: a restarted hub keeps to the same budget.
    SluiceProcess hub(hub_args(dir, {"--prices", table}));
    EXPECT_NEAR(spent(hub, seat), 1.45, 1e-9);
    // $0.35 left: the next turn ends after its first response ($0.76).
    const auto rows = turn_rows(hub, seat, "hello");
    ASSERT_NE(last_of(rows, "result"), nullptr);
    EXPECT_EQ(last_of(rows, "result")->at("subtype"), "error_max_budget_usd");
    EXPECT_EQ(
        last_of(rows, "result")->at("errors").as_array().at(0), "Reached maximum budget ($0.35)");
    EXPECT_EQ(post_json(hub, "/v1/seats/" + seat + "/messages", {{"text", "x"}}).status, 409U);
}

TEST(Budget, EightyPercentSpentIsAlsoToldToWebhooksAndPushOnce) {
    TempDir dir;
    LoopbackReceiver hook;
    SluiceProcess hub(hub_args(dir, {"--prices", prices(dir), "--notify-url", hook.url("/hook")}));
    const auto seat = seat_with_budget(hub, 1.8);
    ASSERT_FALSE(seat.empty());
    (void)turn_rows(hub, seat, "hello", /*notice=*/true);
    ASSERT_TRUE(hook.wait_for(1));
    const auto p = json::parse(hook.received().at(0).body);
    EXPECT_EQ(p.at("kind"), "budget");
    EXPECT_EQ(p.at("seat").as_string(), seat);
    EXPECT_EQ(
        p.at("summary"),
        "$1.45 of this seat's budget of $1.80 spent (80 % reached; budget_usd raises it)");
    EXPECT_NE(p.at("headline").as_string().find("budget 80 % spent"), json::string::npos);
    // Past 80 % already: the next turn (ended at the budget) tells nobody again.
    (void)turn_rows(hub, seat, "again");
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(hook.received().size(), 1U);
}

TEST(Budget, TheHubsDailyBudgetHoldsOverEverySeat) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--prices", prices(dir), "--daily-budget-usd", "1"}));
    const auto a = new_seat(hub);
    const auto b = new_seat(hub);
    // $0.76 of $1 after the first response: the second runs, and the day's budget is spent.
    const auto rows = turn_rows(hub, a, "hello");
    ASSERT_NE(last_of(rows, "result"), nullptr);
    EXPECT_EQ(last_of(rows, "result")->at("subtype"), "success");
    const auto usage = http("GET", hub.base() + "/v1/usage").json;
    EXPECT_EQ(usage.at("budget").at("daily_usd").to_number<double>(), 1.0);
    EXPECT_NEAR(usage.at("budget").at("spent_today_usd").to_number<double>(), 1.45, 1e-9);
    auto refused = post_json(hub, "/v1/seats/" + b + "/messages", {{"text", "hi"}});
    EXPECT_EQ(refused.status, 409U);
    EXPECT_NE(
        refused.body.find("the hub's budget for today (UTC) is spent: $1.45 of $1.00"),
        std::string::npos)
        << refused.body;
    EXPECT_NE(refused.body.find("daily_budget_usd"), std::string::npos);
}

TEST(Budget, ARemovedSeatsSpendStaysInTheDayAlsoAfterARestart) {
    TempDir dir;
    const auto table = prices(dir);
    std::string b;
    {
        SluiceProcess hub(hub_args(dir, {"--prices", table, "--daily-budget-usd", "1"}));
        const auto a = new_seat(hub);
        b = new_seat(hub);
        ASSERT_NE(last_of(turn_rows(hub, a, "hello"), "result"), nullptr); // $1.45 of $1
        // One seat's usage tells of that seat alone: not the hub's day (a viewer may ask this).
        const auto own = http("GET", hub.base() + "/v1/usage?seat=" + b).json.at("budget");
        EXPECT_FALSE(own.as_object().contains("spent_today_usd")) << own;
        EXPECT_EQ(own.at("spent_usd").to_number<double>(), 0.0);
        EXPECT_TRUE(own.at("budget_usd").is_null());
        // Removing the seat that spent does not give the day's budget back.
        EXPECT_EQ(http("DELETE", hub.base() + "/v1/seats/" + a).status, 200U);
        const auto usage = http("GET", hub.base() + "/v1/usage").json;
        EXPECT_NEAR(usage.at("budget").at("spent_today_usd").to_number<double>(), 1.45, 1e-9);
        EXPECT_EQ(post_json(hub, "/v1/seats/" + b + "/messages", {{"text", "hi"}}).status, 409U);
        EXPECT_EQ(hub.terminate(), 0);
    }
    const auto kept = json::parse(slurp(std::filesystem::path(dir.path()) / "removed_spend.json"));
    EXPECT_NEAR(kept.at("usd").to_number<double>(), 1.45, 1e-9);
    // Nor does a restart, when only the removed seat's folder (in archive/) knew of it.
    SluiceProcess hub(hub_args(dir, {"--prices", table, "--daily-budget-usd", "1"}));
    const auto usage = http("GET", hub.base() + "/v1/usage").json;
    EXPECT_NEAR(usage.at("budget").at("spent_today_usd").to_number<double>(), 1.45, 1e-9);
    auto refused = post_json(hub, "/v1/seats/" + b + "/messages", {{"text", "hi"}});
    EXPECT_EQ(refused.status, 409U) << refused.body;
}

TEST(Budget, AClaudeSeatIsStartedWithWhatItsBudgetLeaves) {
    TempDir dir;
    const auto claude = fake_claude(dir);
    SluiceProcess hub(
        {"serve",
         "--listen",
         "127.0.0.1:0",
         "--data",
         dir.file("data"),
         "--claude-bin",
         claude,
         "--daily-budget-usd",
         "3"});
    auto r = post_json(hub, "/v1/seats", {{"agent", "claude"}, {"budget_usd", 2.5}});
    ASSERT_EQ(r.status, 201U) << r.body;
    const std::string seat(r.json.at("seat").as_string());
    const auto said = [&] {
        const auto rows = turn_rows(hub, seat, "budget?");
        const auto* result = last_of(rows, "result");
        return result == nullptr ? std::string() : std::string(result->at("result").as_string());
    };
    EXPECT_EQ(said(), "budget=2.5000") << "the smaller of the seat's $2.50 and the day's $3";
    // A new budget starts the idle agent again with it (its session resumed).
    ASSERT_EQ(patch_json(hub, "/v1/seats/" + seat, {{"budget_usd", 1.25}}).status, 200U);
    EXPECT_EQ(said(), "budget=1.2500");
    ASSERT_EQ(patch_json(hub, "/v1/seats/" + seat, {{"budget_usd", nullptr}}).status, 200U);
    EXPECT_EQ(said(), "budget=3.0000") << "the day's budget still holds";
}

} // namespace
