// Hub, private: a continued session's frames, copied into its new seat's first transcript.
#pragma once

#include <sluice/conversation/transcript.hpp>
#include <sluice/hub/failure.hpp>

#include <cstdint>
#include <filesystem>

namespace sluice::hub {

/// Most bytes of a session file a continue copies. Basis: twice the window's default byte cap
/// (`CONVERSATION_CAP_BYTES`, 32 MiB), so the new seat's window and its first history pages
/// come from it; the copy runs on the shared writer thread, so its time must stay bounded
/// (tens to a few hundred milliseconds) whatever the session's size.
inline constexpr std::uint64_t SEED_MAX_BYTES = 64ULL * 1024 * 1024;

/// Writes the frame rows of the foreign session file `from` to the new transcript `to`, then
/// syncs it: every row when the file holds at most `max_bytes`, otherwise the newest rows
/// within its last `max_bytes`, starting where a turn opens (as a window is cut), or — when no
/// turn opens there — at the first whole frame. Whole lines only: one a person's terminal is
/// still writing stops at its last newline; rows that are no frame are left out, as the file's
/// own seat leaves them out. Memory is one line and one buffer. A Codex rollout (`format`
/// RowFormat::codex_rollout) is copied as the frame rows its lines read as (codex_frame_row).
/// @return the file and the OS reason when a read or a write fails.
[[nodiscard]] Result<void> seed_transcript(
    const std::filesystem::path& from,
    const std::filesystem::path& to,
    RowFormat format = RowFormat::frames,
    std::uint64_t max_bytes = SEED_MAX_BYTES);

} // namespace sluice::hub
