// RelayQueue: the relay's byte policy — a lossy preview lane and a lossless semantic lane,
// sans-I/O.
#pragma once

#include <sluice/core/event.hpp>

#include <boost/container/deque.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace sluice {

/// Bounded caller-facing channel, in events. Basis: the seed system's relay channel.
inline constexpr std::size_t RELAY_CHANNEL_CAPACITY = 64;

/// Largest preview payload handed over in one event. Basis: the seed system (16 KiB).
inline constexpr std::size_t RELAY_FORWARD_CHUNK_BYTES = 16 * 1024;

/// Above this retained level adjacent same-class previews merge. Basis: the seed (64 KiB).
inline constexpr std::size_t RELAY_COALESCE_THRESHOLD_BYTES = 64 * 1024;

/// Most preview bytes retained while the caller does not consume. Basis: the seed (256 KiB).
inline constexpr std::size_t RELAY_DELTA_RETAINED_BUDGET_BYTES = 256 * 1024;

/// The byte limits of one relay queue; the defaults are the seed's constants.
struct RelayLimits {
    std::size_t retained_budget{RELAY_DELTA_RETAINED_BUDGET_BYTES}; ///< most bytes retained
    std::size_t coalesce_threshold{RELAY_COALESCE_THRESHOLD_BYTES}; ///< merge above this level
    std::size_t forward_chunk{RELAY_FORWARD_CHUNK_BYTES};           ///< largest forwarded piece
};

/// Preview byte counters of one queue (or, summed, of the process).
struct RelayCounters {
    std::uint64_t produced{};      ///< preview bytes pushed
    std::uint64_t forwarded{};     ///< preview bytes handed to the consumer
    std::uint64_t dropped{};       ///< preview bytes discarded (trimmed, dropped, left at end)
    std::uint64_t retained{};      ///< preview bytes held now
    std::uint64_t peak_retained{}; ///< the highest `retained` seen
};

/// The relay's byte policy: a plain single-threaded queue with no locks and no I/O.
///
/// Semantic events are kept in order and never dropped, merged or split. Previews are counted
/// as produced when pushed; room is made first (whole oldest previews dropped, or the oldest
/// survivor trimmed from its front at a UTF-8 boundary) so `retained` never exceeds the budget,
/// even transiently. A preview larger than the budget keeps its newest budget bytes. Above the
/// coalesce threshold a preview merges into the tail when the tail is a preview of the same
/// class (and the same tool_id) and the merged preview stays within one forward chunk; below
/// it, every preview keeps its own event. `pop` splits a preview larger than the forward chunk
/// (one pushed that large) at a UTF-8 boundary and leaves the rest at the front.
/// Invariant: produced == forwarded + dropped + retained, always.
///
/// @par Thread safety
/// None: confine an instance to one thread or guard it (RelaySender/RelayReceiver do).
class RelayQueue {
public:
    /// An empty queue with `limits` (the seed's constants by default).
    explicit RelayQueue(RelayLimits limits = {}) noexcept;

    /// Ingests one event. Never fails, never blocks.
    void push(StreamEvent ev);

    /// Hands over the front event (or the front chunk of a large preview); nullopt if empty.
    std::optional<StreamEvent> pop();

    /// Discards every retained preview (counted as dropped) and every queued semantic event.
    /// Used when the relay ends with the caller gone. With `report` false the bytes are not
    /// added to `take_unreported_dropped` (previews superseded by the frame that carries them
    /// are not a loss a viewer must be told about).
    void discard_all(bool report = true) noexcept;

    /// Whether no event is queued.
    [[nodiscard]] bool empty() const noexcept { return events_ == 0; }

    /// Number of queued events (previews and semantic).
    [[nodiscard]] std::size_t size() const noexcept { return events_; }

    /// The byte counters of this queue.
    [[nodiscard]] const RelayCounters& counters() const noexcept { return counters_; }

    /// Bytes dropped since the last call; for in-band loss markers (`gap{dropped_bytes}`).
    [[nodiscard]] std::uint64_t take_unreported_dropped() noexcept;

    /// The limits in force.
    [[nodiscard]] const RelayLimits& limits() const noexcept { return limits_; }

private:
    // The queue is a run of blocks, each some previews followed by at most one semantic event,
    // so the oldest preview is found in amortized O(1) however many semantic events precede it.
    struct Block {
        std::vector<StreamEvent> previews; // live previews are [head, size)
        std::size_t head{};
        std::optional<StreamEvent> semantic;

        [[nodiscard]] bool has_previews() const noexcept { return head < previews.size(); }
    };

    void make_room(std::size_t incoming);
    void drop_bytes(std::uint64_t n) noexcept;
    Block* oldest_preview_block() noexcept;
    void remove_head_preview(Block& b); // not noexcept: vector<StreamEvent>::erase may throw
    void maybe_compact_head(std::string& payload) noexcept;
    bool try_merge(StreamEvent& ev, std::size_t n);
    void note_retained_added(std::size_t n) noexcept;

    RelayLimits limits_;
    RelayCounters counters_;
    std::uint64_t unreported_dropped_{};
    boost::container::deque<Block> blocks_; // allocates nothing while empty (window.hpp)
    std::size_t oldest_hint_{};             // no block before this index holds a preview
    std::size_t events_{};
    // Bytes already trimmed or forwarded from the front of the oldest preview. Only the oldest
    // preview is ever trimmed (make_room) or split (pop), so one offset suffices; it makes
    // both O(1) instead of an O(size) erase at every push of a flood.
    std::size_t head_skip_{};
};

} // namespace sluice
