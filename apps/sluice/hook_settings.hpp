// Claude Code's settings JSON and sluice's hook entries in it: added beside the hooks already
// there, removed exactly, found again. Pure text in, text out (no file I/O).
#pragma once

#include <boost/json/object.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::app {

/// The hook events `sluice hooks install` adds an entry for.
inline constexpr std::array<std::string_view, 5> HOOKED_EVENTS{
    "PermissionRequest", "Notification", "Stop", "SessionStart", "SessionEnd"};

/// What one installed entry runs.
struct HookEntry {
    std::string binary;           ///< this sluice (an absolute path)
    std::string data;             ///< --data for the hook when given to install (else "")
    std::chrono::seconds timeout; ///< the entry's own `timeout`, and the hook's budget
};

/// The shell command of `entry` for `event`: `'<binary>' hook claude EVENT --timeout Ns
/// [--data '<dir>']`.
[[nodiscard]] std::string hook_command(const HookEntry& entry, std::string_view event);

/// Whether a hook command is one of sluice's (`… sluice hook claude <Event> …`).
[[nodiscard]] bool is_sluice_command(std::string_view command);

/// `settings` (a file's text; empty when there is no file) with sluice's entries for every
/// HOOKED_EVENTS event, any earlier ones of sluice's replaced. nullopt, with `why`, when the text
/// is not a JSON object or its `hooks` (or an event's list) has another shape.
[[nodiscard]] std::optional<std::string>
with_hooks(std::string_view settings, const HookEntry& entry, std::string& why);

/// `settings` without sluice's entries (groups and events left empty by that removed, and
/// `hooks` when it is left empty). nullopt, with `why`, when it is not a JSON object.
[[nodiscard]] std::optional<std::string> without_hooks(std::string_view settings, std::string& why);

/// The events sluice's entries are installed for in `settings`, each with its command.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
installed_hooks(std::string_view settings);

/// `v` as Claude Code writes its settings: two-space indented JSON, keys in their order, with
/// a final newline.
[[nodiscard]] std::string pretty_json(const boost::json::value& v);

} // namespace sluice::app
