// Small helpers of the hub: ids, timestamps, Last-Event-ID parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::hub {

/// A new random id with a prefix, e.g. "s-3f9a0c1b2d4e".
std::string new_id(std::string_view prefix);

/// The current UTC time as ISO-8601 with milliseconds (`iso8601_utc` of now).
std::string iso_now();

/// Parses "<epoch>:<seq>" (seq may be -1); nullopt when malformed.
std::optional<std::pair<std::string, std::int64_t>> parse_event_id(std::string_view id);

/// Whether an id is acceptable in a path (letters, digits, '-', '_', 1..64 chars).
bool valid_id(std::string_view id) noexcept;

} // namespace sluice::hub
