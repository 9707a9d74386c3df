// TurnScan: the stateful scan that says which frames open a turn (a prompt a person typed).
#pragma once

#include <sluice/conversation/frame.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

/// Feeds frames in conversation order and answers, for each, whether it opens a turn.
///
/// A turn opens at a main-thread user frame carrying a prompt a person typed: plain text
/// (`FrameRole::prompt`), or a slash command / `!` bash input (`FrameRole::command`: decided
/// explicitly — a person typed it; the fixtures README §6.4 counts them too). These open no turn:
/// tool_result rows; sub-agent frames (`isSidechain`, `parent_tool_use_id`); assistant, system
/// and result frames; `isMeta` rows (skill and command bodies, caveats); the compaction
/// continuation prompt (flagged `isCompactSummary`, starting "This session is being continued…",
/// or the first user text after a `compact_boundary`); envelopes led by `<` (command output,
/// task notifications, IDE context) and bracketed notes (`[Request interrupted by user…]`);
/// images with no typed text that follow a tool call; the first user text after a slash
/// command or after the tool_result of a `Skill` call (the body of a command or skill the open
/// turn called); malformed rows. When in doubt, no turn. Queued-command rows are not frames.
///
/// The state only reaches a few frames back, so a scan started a few frames before a region
/// (a warm-up) answers as a scan from the start does; the conformance tests check this on every
/// fixture transcript.
///
/// @par Thread safety
/// None: a plain value; confine to one owner.
class TurnScan {
public:
    /// Feeds the next frame; @return whether it opens a turn.
    bool opens_turn(const Frame& f);

    /// Feeds the next frame by its `type` and facts (what `RowScanner` reads of a row, without
    /// the frame); answers as the `Frame` overload does for a frame with them.
    bool opens_turn(std::string_view type, const TurnFacts& facts);

    /// Number of frames fed so far.
    std::uint64_t fed() const noexcept { return fed_; }

private:
    std::uint64_t fed_{};
    bool after_boundary_{}; // a compact boundary was seen; the continuation prompt follows
    bool after_command_{};  // the previous main-thread frame was a slash command
    bool skill_pending_{};  // the previous main-thread frame answered a Skill call
    bool in_tool_{};        // the previous main-thread exchange was a tool call or result
    std::vector<std::string> skill_calls_; // open Skill calls of the current turn
};

/// Frames a warm-up needs ahead of a region for `TurnScan` to answer as a full scan does.
inline constexpr std::size_t TURN_SCAN_WARMUP = 16;

} // namespace sluice
