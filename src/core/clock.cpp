// ISO-8601 UTC timestamps: the one formatter the server and the hub share.
#include <sluice/core/clock.hpp>

#include <array>
#include <cstdint>
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

std::optional<std::chrono::system_clock::time_point> parse_iso8601_utc(std::string_view text) {
    // YYYY-MM-DDTHH:MM:SS[.fff…]Z: fixed positions, digits only where digits belong.
    const auto digits = [&text](std::size_t at, std::size_t n) -> std::optional<int> {
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (i >= text.size() || text[i] < '0' || text[i] > '9') {
                return std::nullopt;
            }
            v = v * 10 + (text[i] - '0');
        }
        return v;
    };
    const auto y = digits(0, 4);
    const auto mo = digits(5, 2);
    const auto d = digits(8, 2);
    const auto h = digits(11, 2);
    const auto mi = digits(14, 2);
    const auto s = digits(17, 2);
    if (!y || !mo || !d || !h || !mi || !s || text.size() < 20 || text[4] != '-' || text[7] != '-'
        || text[10] != 'T' || text[13] != ':' || text[16] != ':' || *mo < 1 || *mo > 12 || *d < 1
        || *d > 31 || *h > 23 || *mi > 59 || *s > 60) {
        return std::nullopt;
    }
    std::size_t at = 19;
    std::int64_t ms = 0;
    if (text[at] == '.') {
        std::int64_t scale = 100;
        for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
            ms += (text[at] - '0') * scale;
            scale /= 10;
        }
    }
    if (at + 1 != text.size() || text[at] != 'Z') {
        return std::nullopt;
    }
    using namespace std::chrono;
    const year_month_day date{
        year{*y}, month{static_cast<unsigned>(*mo)}, day{static_cast<unsigned>(*d)}};
    if (!date.ok()) {
        return std::nullopt;
    }
    return sys_days{date} + hours{*h} + minutes{*mi} + seconds{*s} + milliseconds{ms};
}

} // namespace sluice
