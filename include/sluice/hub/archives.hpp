// What a hub keeps of what it no longer serves: reset archives inside seat folders, removed seats'
// folders under the archive root, their pruning (retain_archives_days) and folder sizes.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

namespace sluice::hub {

/// What prune_archives removed.
struct Pruned {
    std::uint64_t files{};   ///< reset archives (and their indexes) removed
    std::uint64_t folders{}; ///< removed seats' folders removed
    std::uint64_t bytes{};   ///< bytes they held
};

/// Removes what is older than `max_age` (by modification time, which archiving sets): each seat
/// folder's reset archives `transcript.<epoch>.jsonl` (with its `.sidx`) under `seats_root`, except
/// the archive of the epoch in `current_epochs` (a reset the hub stopped in the middle of:
/// opening the seat finishes it), and each folder under `archive_root`. Blocking file work (run it
/// on the writer). Errors are skipped: what cannot be removed now is tried at the next pruning.
Pruned prune_archives(
    const std::filesystem::path& seats_root,
    const std::filesystem::path& archive_root,
    std::chrono::seconds max_age,
    const std::map<std::string, std::string>& current_epochs);

/// Retires a removed seat's folder: moves `dir` to `to` (its parents made; its modification time
/// set to now, so that its age for retain_archives_days counts from its removal), or deletes it
/// when `to` is empty. Blocking (run it on the writer).
/// @return the file system's error, or none
std::error_code retire_folder(const std::filesystem::path& dir, const std::filesystem::path& to);

/// The bytes of every regular file under `dir` (0 when it is missing). Blocking.
std::uint64_t folder_bytes(const std::filesystem::path& dir);

/// The name a removed seat's folder takes under the archive root: `<id>.<UTC yyyymmddThhmmssZ>`.
std::string archived_folder_name(const std::string& id, std::chrono::system_clock::time_point at);

} // namespace sluice::hub
