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

TEST(Clock, ParsesWhatItFormatsAndClaudeCodeWrites) {
    for (const std::int64_t ms : {0LL, 999LL, 951'782'400'123LL, 1'796'117'719'042LL}) {
        const system_clock::time_point tp{milliseconds(ms)};
        const auto back = sluice::parse_iso8601_utc(sluice::iso8601_utc(tp));
        ASSERT_TRUE(back.has_value()) << ms;
        EXPECT_EQ(*back, tp) << ms;
    }
    const auto whole = sluice::parse_iso8601_utc("2026-12-01T09:35:19Z");
    ASSERT_TRUE(whole.has_value());
    EXPECT_EQ(sluice::iso8601_utc(*whole), "2026-12-01T09:35:19.000Z");
    const auto micro = sluice::parse_iso8601_utc("2026-12-01T09:35:19.042917Z");
    ASSERT_TRUE(micro.has_value());
    EXPECT_EQ(sluice::iso8601_utc(*micro), "2026-12-01T09:35:19.042Z");
}

TEST(Clock, RefusesWhatIsNotAUtcTimestamp) {
    for (const char* bad :
         {"",
          "2026-12-01",
          "2026-12-01T09:35:19",
          "2026-12-01T09:35:19+01:00",
          "2026-13-01T09:35:19Z",
          "2026-02-30T09:35:19Z",
          "2026-12-01 09:35:19Z",
          "yesterday",
          "2026-12-01T09:35:19.042Zjunk"}) {
        EXPECT_FALSE(sluice::parse_iso8601_utc(bad).has_value()) << bad;
    }
}

} // namespace
