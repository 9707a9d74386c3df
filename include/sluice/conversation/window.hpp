// Window: the newest part of a conversation, bounded by frames and bytes, cut where a turn opens.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/container/deque.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace sluice {

/// Frames a window keeps after a cut. Basis: the seed system's conversation cap.
inline constexpr std::uint64_t CONVERSATION_CAP = 4000;

/// Frames a window may grow past the cap before the drop runs, so a cut is paid once per slack,
/// not per frame. Basis: the seed (a quarter of the cap).
inline constexpr std::uint64_t CONVERSATION_SLACK = 1000;

/// Wire bytes a window keeps after a cut. Basis: the seed (32 MiB of compact JSON).
inline constexpr std::uint64_t CONVERSATION_CAP_BYTES = 32ULL * 1024 * 1024;

/// Wire bytes a window may grow past the byte cap. Basis: the seed (a quarter of the byte cap).
inline constexpr std::uint64_t CONVERSATION_SLACK_BYTES = CONVERSATION_CAP_BYTES / 4;

/// Turns in one page. Basis: the seed's subscribe page.
inline constexpr std::size_t SUBSCRIBE_TURNS = 20;

/// The ceilings of one window: caps plus their slack, in frames and in wire bytes.
struct Budget {
    std::uint64_t cap{CONVERSATION_CAP};                 ///< frames kept after a cut
    std::uint64_t slack{CONVERSATION_SLACK};             ///< frames of growth before a cut
    std::uint64_t cap_bytes{CONVERSATION_CAP_BYTES};     ///< wire bytes kept after a cut
    std::uint64_t slack_bytes{CONVERSATION_SLACK_BYTES}; ///< wire bytes of growth before a cut

    /// A budget with the given caps and each slack a quarter of its cap (as the defaults).
    static Budget scaled(std::uint64_t cap, std::uint64_t cap_bytes) noexcept {
        return {cap, cap / 4, cap_bytes, cap_bytes / 4};
    }

    /// Whether `frames` and `bytes` are past cap + slack on either axis.
    bool past_ceiling(std::uint64_t frames, std::uint64_t bytes) const noexcept {
        return frames > cap + slack || bytes > cap_bytes + slack_bytes;
    }
};

/// What a cut shed: frames dropped, and the thinking growth (the newest turn's own
/// `thinking_tokens` counter deltas, not a sub-agent's) the drop took out of the newest turn.
struct Shed {
    std::uint64_t frames{};   ///< frames dropped
    std::uint64_t thinking{}; ///< thinking-token growth dropped from the newest turn
};

/// A frame as a window holds it: the frame and whether it opens a turn.
struct HeldFrame {
    FramePtr frame; ///< the frame
    bool opens{};   ///< whether it opens a turn
};

/// Held frames, oldest first. Boost.Container's deque allocates nothing until its first
/// element (libstdc++'s allocates a 512-byte block and its map when constructed): an empty
/// window — every listed, never-opened foreign session file has one — costs only its fields.
using HeldFrames = boost::container::deque<HeldFrame>;

/// The one cut of DESIGN.md over `held` (oldest first): @return the index of the first frame
/// to keep. 1. `line` = the first frame from which the tail fits both caps (the newest frame is
/// always kept); 2. the first turn opening at or after `line`; 3. else the newest opening
/// before `line` if the tail from it fits cap + slack on both axes; 4. else `line`, inside the
/// turn. Pure; used by the live window and by a resume from a transcript.
std::size_t cut_point(const HeldFrames& held, const Budget& budget);

/// The thinking growth a cut at `cut` takes out of the newest turn of `held` (see Shed).
std::uint64_t shed_thinking(const HeldFrames& held, std::size_t cut);

/// One turn of a page: its first frame's position and its frames, oldest first.
struct PageTurn {
    std::uint64_t first{};        ///< conversation position of `frames[0]`
    std::vector<FramePtr> frames; ///< the turn's frames (the oldest turn may start mid-turn)
};

/// A page of history: turns oldest first, and the cursor to ask for older (none at the start).
struct Page {
    std::vector<PageTurn> turns;         ///< the turns, oldest first
    std::optional<std::uint64_t> cursor; ///< position to pass as `before` for older turns
};

/// The newest part of one conversation, in the conversation's own numbering.
///
/// Positions are 0-based among the conversation's frames; the window counts what it dropped,
/// so positions are stable across drops. A live copy grows to cap + slack on either axis, then
/// `append` cuts it (see `cut_point`). Frames before the first opening the window holds belong
/// to a turn opened below its floor (or to no turn).
///
/// @par Thread safety
/// None: one owner (the seat's strand). Frames it hands out are shared and immutable.
// The implicit move assignment cannot throw: Boost.Container's deque with std::allocator (always
// equal) moves by swapping pointers (its operator= is noexcept then); clang-tidy's analysis
// also walks the unequal-allocator branch, which copies.
// NOLINTNEXTLINE(bugprone-exception-escape)
class Window {
public:
    /// An empty window whose next frame has position `first`.
    explicit Window(Budget budget = {}, std::uint64_t first = 0) noexcept;

    /// A window restored from a transcript: `held` starts at position `first`; `scan` is the
    /// turn scan's state after the newest held frame, so live appends continue it.
    static Window restore(Budget budget, std::uint64_t first, HeldFrames held, TurnScan scan);

    /// Appends the next frame, deciding with the window's scan whether it opens a turn; cuts
    /// when past cap + slack on either axis. @return what the cut shed (zero if none).
    Shed append(FramePtr f);

    /// Appends a frame whose turn flag is already known (the scan is not fed).
    Shed append(FramePtr f, bool opens);

    /// Position of the oldest held frame (== end() when empty).
    std::uint64_t first() const noexcept { return first_; }

    /// One past the newest frame's position: the frames the conversation has seen.
    std::uint64_t end() const noexcept { return first_ + held_.size(); }

    /// The frame at `pos`, or null outside the window.
    FramePtr at(std::uint64_t pos) const noexcept;

    /// Whether the frame at `pos` opens a turn (false outside the window).
    bool opens_turn(std::uint64_t pos) const noexcept;

    /// Frames held.
    std::size_t size() const noexcept { return held_.size(); }

    /// Wire bytes held.
    std::uint64_t bytes() const noexcept { return bytes_; }

    /// The budget.
    const Budget& budget() const noexcept { return budget_; }

    /// The held frames, oldest first (position of `held()[i]` is `first() + i`).
    const HeldFrames& held() const noexcept { return held_; }

    /// Up to `max` frames from position `pos` (clamped to the window), oldest first.
    std::vector<FramePtr> frames_from(std::uint64_t pos, std::size_t max = SIZE_MAX) const;

    /// Turn openings held (positions), oldest first.
    std::vector<std::uint64_t> openings() const;

    /// The newest `max_turns` turns before `before` (default: the end), or all the window holds
    /// below it. @return nullopt when `before` is at or below the floor and older frames exist:
    /// ask the transcript (`Transcript::page`).
    std::optional<Page> page(
        std::optional<std::uint64_t> before = std::nullopt,
        std::size_t max_turns = SUBSCRIBE_TURNS) const;

    /// The turn scan's state after the newest frame.
    const TurnScan& scan() const noexcept { return scan_; }

private:
    Shed cut_if_past_ceiling();

    Budget budget_;
    std::uint64_t first_{};
    std::uint64_t bytes_{};
    HeldFrames held_;
    TurnScan scan_;
};

} // namespace sluice
