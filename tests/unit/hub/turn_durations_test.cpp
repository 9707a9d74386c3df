// Unit tests of sluice/hub/turn_durations.hpp: buckets are cumulative, bounds inclusive.
#include <sluice/hub/turn_durations.hpp>

#include <gtest/gtest.h>

namespace {

using sluice::hub::TURN_DURATION_BUCKETS;
using sluice::hub::TurnDurations;
using namespace std::chrono_literals;

TEST(TurnDurations, BucketsAreCumulativeWithInclusiveBounds) {
    TurnDurations d;
    d.observe(TurnDurations::Outcome::ended, 200ms);  // <= 0.5
    d.observe(TurnDurations::Outcome::ended, 1000ms); // <= 1 (a bound is inclusive)
    d.observe(TurnDurations::Outcome::ended, 45s);    // <= 60
    d.observe(TurnDurations::Outcome::ended, 2h);     // past every bound: +Inf only
    d.observe(TurnDurations::Outcome::failed, 3s);
    const auto s = d.snapshot(TurnDurations::Outcome::ended);
    EXPECT_EQ(s.count, 4U);
    EXPECT_EQ(s.le.at(0), 1U);                                // 0.5
    EXPECT_EQ(s.le.at(1), 2U);                                // 1
    EXPECT_EQ(s.le.at(5), 2U);                                // 30
    EXPECT_EQ(s.le.at(6), 3U);                                // 60
    EXPECT_EQ(s.le.at(TURN_DURATION_BUCKETS.size() - 1), 3U); // 1800
    EXPECT_DOUBLE_EQ(s.sum_seconds, 0.2 + 1 + 45 + 7200);
    const auto f = d.snapshot(TurnDurations::Outcome::failed);
    EXPECT_EQ(f.count, 1U);
    EXPECT_EQ(f.le.at(2), 0U); // 2.5
    EXPECT_EQ(f.le.at(3), 1U); // 5
    EXPECT_EQ(d.snapshot(TurnDurations::Outcome::cancelled).count, 0U);
    EXPECT_STREQ(TurnDurations::name(TurnDurations::Outcome::cancelled), "cancelled");
}

} // namespace
