// Unit tests of sluice/core/histogram.hpp: bounds inclusive, buckets cumulative, negatives as 0.
#include <sluice/core/histogram.hpp>

#include <gtest/gtest.h>

#include <array>

namespace {

using namespace std::chrono_literals;

constexpr std::array<double, 3> BOUNDS{0.001, 0.01, 0.1};

TEST(Histogram, CountsIntoCumulativeBucketsWithInclusiveBoundsAndTheRestIntoInf) {
    sluice::Histogram h(BOUNDS);
    h.observe(-5ms);   // a clock that stepped: as 0
    h.observe(1ms);    // <= 0.001 (inclusive)
    h.observe(1500us); // <= 0.01
    h.observe(2s);     // +Inf only
    const auto s = h.snapshot();
    EXPECT_EQ(h.bounds().size(), 3U);
    EXPECT_EQ(s.le.at(0), 2U);
    EXPECT_EQ(s.le.at(1), 3U);
    EXPECT_EQ(s.le.at(2), 3U);
    EXPECT_EQ(s.count, 4U);
    EXPECT_DOUBLE_EQ(s.sum_seconds, 0.001 + 0.0015 + 2);
}

} // namespace
