// The hub's log lines: one line per event (a message's newlines escaped), as text or JSON, on
// stdout; colour only on a terminal.
#pragma once

#include <string_view>

namespace sluice::app {

/// How log lines are written (`--log-format`).
enum class LogFormat { text, json };

/// Parses "text" or "json". @return false for anything else.
bool parse_log_format(std::string_view s, LogFormat& out);

/// Makes the default logger write `format` lines to stdout: text is
/// `2026-12-04T18:30:00.123Z info message`, the level coloured only when stdout is a terminal
/// (and NO_COLOR is unset); json is `{"time":…,"level":…,"message":…}`. Call before the first
/// log line and before any thread starts.
void configure_logging(LogFormat format);

} // namespace sluice::app
