// Tests of the UTF-8 boundary helpers.
#include <sluice/core/utf8.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using sluice::utf8::ceil_boundary;
using sluice::utf8::floor_boundary;

// "aé€😀" = 1 + 2 + 3 + 4 bytes; boundaries at 0, 1, 3, 6, 10.
const std::string MIXED = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";

TEST(Utf8, CeilMovesForwardToTheNextCharacter) {
    EXPECT_EQ(ceil_boundary(MIXED, 0), 0U);
    EXPECT_EQ(ceil_boundary(MIXED, 2), 3U);
    EXPECT_EQ(ceil_boundary(MIXED, 4), 6U);
    EXPECT_EQ(ceil_boundary(MIXED, 7), 10U);
    EXPECT_EQ(ceil_boundary(MIXED, 99), 10U);
}

TEST(Utf8, FloorMovesBackToTheCharacterStart) {
    EXPECT_EQ(floor_boundary(MIXED, 2), 1U);
    EXPECT_EQ(floor_boundary(MIXED, 5), 3U);
    EXPECT_EQ(floor_boundary(MIXED, 9), 6U);
    EXPECT_EQ(floor_boundary(MIXED, 10), 10U);
}

TEST(Utf8, InvalidRunsDoNotRunAway) {
    const std::string junk(10, '\x80');
    EXPECT_LE(ceil_boundary(junk, 2), 5U);
    EXPECT_EQ(floor_boundary(junk, 8), 8U);
}

} // namespace
