// ISO-8601 UTC timestamps: the one formatter the server and the hub share.
#include <sluice/core/clock.hpp>

#include <array>
#include <cstdio>
#include <ctime>

namespace sluice {

std::string iso8601_utc(std::chrono::system_clock::time_point tp) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    const auto since = tp.time_since_epoch();
    auto ms = duration_cast<milliseconds>(since).count() % 1000;
    auto secs = std::chrono::system_clock::to_time_t(tp);
    if (ms < 0) { // before 1970: to_time_t rounds toward zero, the millisecond part must not be
                  // negative
        ms += 1000;
        secs -= 1;
    }
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::array<char, 64> buf{}; // roomy: GCC cannot prove the fields stay 2-4 digits
    std::snprintf(
        buf.data(),
        buf.size(),
        "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        static_cast<int>(ms));
    return buf.data();
}

} // namespace sluice
