// Seat metadata: SeatSpec ↔ meta.json, read and written in this one place.
#pragma once

#include <sluice/hub/failure.hpp>
#include <sluice/hub/spend_limits.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::hub {

/// What a seat is: its identity and its agent's settings (persisted in `meta.json`).
struct SeatSpec {
    std::string id;               ///< stable id (generated when empty)
    std::string name;             ///< for people
    std::string agent{"builtin"}; ///< "builtin" | "process" | "claude" | "codex" | "acp"
    /// acp: the agent's command line, one of those the hub allows (`serve --acp-agent`)
    std::string cmd;
    std::string model;     ///< builtin: model override (empty: the server's)
    std::string system;    ///< builtin: system prompt override
    std::string epoch;     ///< changes when the conversation is replaced
    std::uint64_t turns{}; ///< prompts accepted so far
    /// Frames published under `epoch`, as of the last transcript sync (the high-water mark).
    std::uint64_t published{};
    /// Frames past `published` may have been published since (a turn ran unsynced): a crash
    /// then leaves the true mark unknown, and the next open changes the epoch.
    bool unsynced{};
    std::string cwd;             ///< claude: the agent's working directory (in a workspace root)
    std::string permission_mode; ///< claude: its --permission-mode (empty: its default)
    std::string session_id;      ///< claude: the session to `--resume` (from system/init)
    std::optional<double> budget_usd; ///< what the seat may spend in all (none: no limit)
    SeatSpend spend;                  ///< what its counted turns cost (USD)
    /// Not kept: what the seat may still spend when its agent is made (SpendLimits::left), for
    /// a claude seat's `--max-budget-usd`.
    std::optional<double> budget_left;
};

/// The file a seat's metadata lives in, inside its folder.
inline constexpr std::string_view SEAT_META_FILE = "meta.json";

/// meta.json's text for a spec (one compact JSON object and a newline).
[[nodiscard]] std::string encode_meta(const SeatSpec& spec);

/// Parses meta.json's text. @return corrupt_data naming what is wrong ("not JSON: …",
/// "'id' is missing or not a valid id", "'epoch' is missing", "'turns' is not a count").
/// An absent or empty `agent` reads as "builtin" (files from before agents had kinds).
[[nodiscard]] Result<SeatSpec> decode_meta(std::string_view text);

/// Reads `<dir>/meta.json`. @return io_error with the OS reason when it cannot be read,
/// corrupt_data (see decode_meta) when it is damaged; the message names the file.
/// @par Thread safety
/// Safe from any thread; blocking (a file read).
[[nodiscard]] Result<SeatSpec> read_meta(const std::filesystem::path& dir);

/// Replaces `<dir>/meta.json` through `safe_write` (temp, fsync, rename, dir fsync); on failure
/// the old file stays whole. @return the file and the OS reason, coded by `write_errc`
/// (insufficient_storage for no space, read_only, io_error).
/// @par Thread safety
/// Safe from any thread; blocking: the hub calls it on its writer (hub/writer.hpp).
[[nodiscard]] Result<void> write_meta(const std::filesystem::path& dir, const SeatSpec& spec);

} // namespace sluice::hub
