// Unit tests of hub/spend_limits.hpp: what a seat may still spend under its own budget and the
// hub's daily one, the refusal once one is spent, and the notice when 80 % is crossed.
#include <sluice/hub/spend_limits.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::hub {
namespace {

constexpr const char* TODAY = "2026-12-06";
constexpr const char* YESTERDAY = "2026-12-05";

TEST(SpendLimits, NoBudgetLeavesEverything) {
    SpendLimits limits;
    limits.note("s-a", std::nullopt, {});
    EXPECT_FALSE(limits.left("s-a", TODAY));
    EXPECT_FALSE(limits.refusal("s-a", TODAY));
    const auto u = limits.add("s-a", 100, TODAY);
    EXPECT_EQ(u.spend.total_usd, 100);
    EXPECT_FALSE(u.notice);
    EXPECT_FALSE(limits.refusal("s-a", TODAY));
}

TEST(SpendLimits, ASeatsBudgetIsSpentInAllNotPerDay) {
    SpendLimits limits;
    limits.note("s-a", 2.0, SeatSpend{1.0, YESTERDAY, 1.0});
    EXPECT_EQ(limits.left("s-a", TODAY), 1.0);
    // Crossing 80 % ($1.60) says so once.
    auto u = limits.add("s-a", 0.7, TODAY);
    ASSERT_TRUE(u.notice);
    EXPECT_EQ(
        *u.notice,
        "$1.70 of this seat's budget of $2.00 spent (80 % reached; budget_usd raises it)");
    EXPECT_EQ(u.spend.total_usd, 1.7);
    EXPECT_EQ(u.spend.day, TODAY);
    EXPECT_EQ(u.spend.day_usd, 0.7);
    EXPECT_FALSE(limits.refusal("s-a", TODAY));
    u = limits.add("s-a", 0.5, TODAY);
    EXPECT_FALSE(u.notice) << "80 % was crossed before";
    EXPECT_NEAR(*limits.left("s-a", TODAY), -0.2, 1e-9);
    const auto why = limits.refusal("s-a", TODAY);
    ASSERT_TRUE(why);
    EXPECT_EQ(
        *why, "this seat's budget is spent: $2.20 of $2.00 (raise budget_usd with PATCH to go on)");
    // Raised: it may spend again.
    limits.note("s-a", 5.0, u.spend);
    EXPECT_FALSE(limits.refusal("s-a", TODAY));
    EXPECT_NEAR(*limits.left("s-a", TODAY), 2.8, 1e-9);
}

TEST(SpendLimits, TheDailyBudgetCountsEverySeatsSpendOfToday) {
    SpendLimits limits(3.0);
    limits.note("s-a", std::nullopt, SeatSpend{10, YESTERDAY, 10}); // yesterday's: not counted
    limits.note("s-b", 10.0, {});
    EXPECT_EQ(limits.left("s-a", TODAY), 3.0);
    EXPECT_EQ(limits.spent_on(TODAY), 0.0);
    auto u = limits.add("s-a", 2.0, TODAY);
    EXPECT_FALSE(u.notice);
    u = limits.add("s-b", 0.5, TODAY);
    ASSERT_TRUE(u.notice) << "2.5 of 3 is past 80 %";
    EXPECT_EQ(
        *u.notice,
        "$2.50 of the hub's budget of $3.00 for today spent (80 % reached; daily_budget_usd "
        "raises it)");
    // The smaller of what the seat's budget and the day's leave.
    EXPECT_EQ(limits.left("s-b", TODAY), 0.5);
    limits.add("s-b", 0.5, TODAY);
    const auto why = limits.refusal("s-a", TODAY);
    ASSERT_TRUE(why);
    EXPECT_EQ(
        *why,
        "the hub's budget for today (UTC) is spent: $3.00 of $3.00 (daily_budget_usd in the "
        "config raises it)");
    // A new day: the day's budget is whole again.
    EXPECT_FALSE(limits.refusal("s-a", "2026-12-07"));
    EXPECT_EQ(limits.left("s-a", "2026-12-07"), 3.0);
}

TEST(SpendLimits, ARemovedSeatsSpendOfItsDayStaysInThatDay) {
    SpendLimits limits(3.0);
    limits.note("s-a", std::nullopt, SeatSpend{5, TODAY, 2.0});
    limits.note("s-b", std::nullopt, SeatSpend{1, YESTERDAY, 1.0});
    limits.note("s-c", std::nullopt, {});
    limits.forget("s-b"); // yesterday's: kept as yesterday's, not today's
    EXPECT_EQ(limits.removed().day, YESTERDAY);
    EXPECT_EQ(limits.spent_on(TODAY), 2.0);
    limits.forget("s-a"); // today's $2 stays in today (a later day starts the count anew)
    EXPECT_EQ(limits.removed().day, TODAY);
    EXPECT_EQ(limits.removed().day_usd, 2.0);
    EXPECT_EQ(limits.spent_on(TODAY), 2.0);
    limits.add("s-c", 1.0, TODAY);
    EXPECT_TRUE(limits.refusal("s-c", TODAY)) << "$2 removed + $1 of $3";
    EXPECT_FALSE(limits.refusal("s-c", "2026-12-07"));
    limits.forget("s-b"); // unknown now: nothing
    EXPECT_EQ(limits.removed().day_usd, 2.0);
}

TEST(SpendLimits, RemovedSpendIsKeptInAFileAndADamagedOneIsNothing) {
    const auto file = std::filesystem::temp_directory_path()
                      / ("removed_spend_" + std::to_string(::getpid()) + ".json");
    EXPECT_TRUE(read_removed_spend(file).day.empty()) << "missing: nothing";
    ASSERT_FALSE(write_removed_spend(file, SeatSpend{9, TODAY, 1.25}));
    const auto back = read_removed_spend(file);
    EXPECT_EQ(back.day, TODAY);
    EXPECT_EQ(back.day_usd, 1.25);
    std::ofstream(file) << "{\"day\":"; // torn
    EXPECT_TRUE(read_removed_spend(file).day.empty());
    std::ofstream(file) << R"({"day":"2026-12-06","usd":-4})";
    EXPECT_TRUE(read_removed_spend(file).day.empty());
    std::filesystem::remove(file);
}

TEST(SpendLimits, TheClaudeFlagNeverAsksForNothing) {
    EXPECT_EQ(max_budget_arg(2.5), "2.5000");
    EXPECT_EQ(max_budget_arg(-1), "0.0001");
    EXPECT_EQ(usd_text(0.004), "$0.004");
    EXPECT_EQ(usd_text(12.346), "$12.35");
}

} // namespace
} // namespace sluice::hub
