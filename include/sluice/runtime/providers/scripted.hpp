// The scripted provider: replays a response stream from a JSON script at a set pace, no network.
#pragma once

#include <sluice/runtime/providers/provider.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace sluice::runtime {

/// The built-in script (embedded): round 1 thinks, says a line and calls a tool (the first of
/// `bash`, `read_file`, `echo` the request offers), round 2 answers. Script format:
/// @code
/// {"model": "scripted-demo",            // optional, reported in usage
///  "delay_ms": 30,                      // optional pause before each event (times the pace)
///  "chunk_bytes": 24,                   // optional: text/thinking events stream in pieces this
///  big "rounds": [                          // response k of a turn replays rounds[min(k, n-1)]
///    {"events": [
///       {"thinking": "…", "signature": "…"},
///       {"text": "…", "repeat": 3},      // repeat: times to emit it; -1 = forever (floods);
///                                        // "{{message_count}}" in a text becomes the request's
///                                        message count
///       {"tool_use": {"id": "toolu_1", "name": "bash", "input": {"command": "echo hi"}}},
///       {"tool_use": {"choices": [{"name": "bash", "input": {…}}, {"name": "echo", …}]}},
///       {"error": "overloaded"}],       // stream fails with this message (errc::provider_error)
///     "stop_reason": "tool_use",         // optional: default tool_use if a tool was called, else
///     end_turn "usage": {"input": 10, "output": 20}}]}
/// @endcode
[[nodiscard]] std::string_view default_script() noexcept;

/// Builds a scripted provider from script text (JSON as above).
/// @param pace multiplies the script's delays (0 = as fast as possible).
/// @throws std::invalid_argument when the script is not valid.
[[nodiscard]] std::unique_ptr<Provider>
make_scripted_provider(std::string_view script, double pace);

/// Builds a scripted provider from `config.script_path` (empty: the built-in script) and
/// `config.script_pace`. @throws std::invalid_argument when the file cannot be read or parsed.
[[nodiscard]] std::unique_ptr<Provider> make_scripted_provider(const ProviderConfig& config);

} // namespace sluice::runtime
