// ISO-8601 UTC timestamps: the one formatter, at its edges.
#include <sluice/core/clock.hpp>

#include <gtest/gtest.h>

namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(Clock, FormatsUtcWithMilliseconds) {
    struct Row {
        long long ms_since_epoch;
        const char* want;
    };

    const Row rows[] = {
        {0, "1970-01-01T00:00:00.000Z"},
        {1, "1970-01-01T00:00:00.001Z"},
        {999, "1970-01-01T00:00:00.999Z"},
        {1'000, "1970-01-01T00:00:01.000Z"},
        {951'782'400'123, "2000-02-29T00:00:00.123Z"}, // a leap day
        {1'796'117'719'042, "2026-12-01T09:35:19.042Z"},
        {-1, "1969-12-31T23:59:59.999Z"}, // before the epoch: no negative milliseconds
        {-1'000, "1969-12-31T23:59:59.000Z"},
    };
    for (const auto& r : rows) {
        const system_clock::time_point tp{milliseconds(r.ms_since_epoch)};
        EXPECT_EQ(sluice::iso8601_utc(tp), r.want) << r.ms_since_epoch;
    }
}

TEST(Clock, IsTwentyFourCharacters) {
    EXPECT_EQ(sluice::iso8601_utc(system_clock::now()).size(), 24U);
}

} // namespace
