// Wall-clock timestamps as the API and the transcripts write them: ISO-8601, UTC.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

/// `tp` as ISO-8601 UTC with milliseconds, e.g. "2026-12-01T08:35:19.042Z" (24 characters).
///
/// @par Thread safety
/// Safe from any thread (`gmtime_r`, no shared state).
[[nodiscard]] std::string iso8601_utc(std::chrono::system_clock::time_point tp);

/// The time an ISO-8601 UTC timestamp names ("2026-12-01T08:35:19.042Z", the fraction optional,
/// as `iso8601_utc` and Claude Code write them); nullopt for any other text.
///
/// @par Thread safety
/// Safe from any thread (pure).
[[nodiscard]] std::optional<std::chrono::system_clock::time_point>
parse_iso8601_utc(std::string_view text);

} // namespace sluice
