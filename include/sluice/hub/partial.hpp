// PartialTurn: the open turn's message as far as it streamed, for viewers who join mid-turn.
#pragma once

#include <sluice/core/event.hpp>
#include <sluice/core/relay_queue.hpp>

#include <boost/container/deque.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::hub {

/// Most bytes of the open turn's partial message a seat keeps (the newest). Basis: the preview
/// budget of a caller's relay (RELAY_DELTA_RETAINED_BUDGET_BYTES, 256 KiB): what a reader who
/// kept up could be shown without a frame is what a joiner is shown. One per running turn.
inline constexpr std::size_t PARTIAL_TURN_MAX_BYTES = RELAY_DELTA_RETAINED_BUDGET_BYTES;

/// The previews a seat published since its last frame — text, thinking and tool input,
/// accumulated per block in arrival order — so a viewer who joins (or resumes) mid-turn sees
/// the answer from its first word instead of from the next delta. A frame supersedes it (the
/// frame carries the content): the seat clears it whenever frames are published and at the end
/// of a turn. Bounded by `max_bytes`: past it the oldest bytes go (cut at a character boundary)
/// and `missing_bytes` counts them. Tool output (ToolResultDelta) is not kept: it is not part of
/// the message.
///
/// JSON form (`json()`), as `connected`/`resumed` carry it under `"partial"`:
/// `{"text":…,"thinking":…,"tools":[{"id":…,"input":…}],"missing_bytes":N}`
/// (`text`/`thinking` omitted when empty).
///
/// @par Thread safety
/// None: the seat's strand owns it. Sans-I/O.
class PartialTurn {
public:
    explicit PartialTurn(std::size_t max_bytes = PARTIAL_TURN_MAX_BYTES) noexcept
        : max_(max_bytes) {}

    /// Adds a published preview (non-previews and tool output are ignored).
    void add(const StreamEvent& ev);

    /// Forgets everything (a frame superseded it, or the turn ended).
    void clear() noexcept;

    /// Counts `n` preview bytes of this message that never reached this copy (a mirror that
    /// joined mid-message or lost some on the way); shown as `missing_bytes` with the cut ones.
    void note_missing(std::uint64_t n) noexcept {
        missing_ += n;
        ++version_;
    }

    /// Whether there is anything to show (kept bytes, or bytes known to be missing).
    [[nodiscard]] bool empty() const noexcept { return parts_.empty() && missing_ == 0; }

    /// Bytes held now (at most the bound).
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

    /// Bytes cut from the start by the bound since the last `clear`.
    [[nodiscard]] std::uint64_t missing_bytes() const noexcept { return missing_; }

    /// Changes with every `add` and `clear`: a page built for one version serves every viewer
    /// who joins before the next change.
    [[nodiscard]] std::uint64_t version() const noexcept { return version_; }

    /// The JSON object above (compact, one line).
    [[nodiscard]] std::string json() const;

private:
    enum class Kind : std::uint8_t { text, thinking, tool_input };

    struct Part {
        Kind kind;
        std::string tool_id; // for tool_input
        std::string bytes;
    };

    void trim();

    std::size_t max_;
    boost::container::deque<Part> parts_;
    std::size_t bytes_{};
    std::uint64_t missing_{};
    std::uint64_t version_{};
};

} // namespace sluice::hub
