// Small helpers of the hub: ids, timestamps, Last-Event-ID parsing.
#include "ids.hpp"

#include <sluice/core/clock.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <random>

namespace sluice::hub {

std::string new_id(std::string_view prefix) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::array<char, 17> hex{};
    std::snprintf(hex.data(), hex.size(), "%012llx", static_cast<unsigned long long>(rng() >> 16U));
    return std::string(prefix) + "-" + hex.data();
}

std::string iso_now() {
    return iso8601_utc(std::chrono::system_clock::now());
}

std::optional<std::pair<std::string, std::int64_t>> parse_event_id(std::string_view id) {
    const auto colon = id.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= id.size()) {
        return std::nullopt;
    }
    std::int64_t seq = 0;
    const auto* b = id.data() + colon + 1;
    const auto* e = id.data() + id.size();
    auto [p, ec] = std::from_chars(b, e, seq);
    if (ec != std::errc{} || p != e || seq < -1) {
        return std::nullopt;
    }
    return std::pair{std::string(id.substr(0, colon)), seq};
}

bool valid_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > 64) {
        return false;
    }
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '-' || c == '_';
    });
}

} // namespace sluice::hub
