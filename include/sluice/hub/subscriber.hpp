// Subscriber: one viewer of a seat — its cursor, its lossy preview lane and its pending events.
#pragma once

#include <sluice/core/relay_queue.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/json/value.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice {
class Frame;
}

namespace sluice::hub {

/// A subscriber's preview lane is smaller than a caller's relay: a seat may have thousands of
/// viewers, and a preview is only a preview. Basis: 1,000 stalled viewers cost at most 64 MiB.
inline constexpr RelayLimits SUBSCRIBER_PREVIEW_LIMITS{
    .retained_budget = 64 * 1024,
    .coalesce_threshold = 16 * 1024,
    .forward_chunk = 16 * 1024,
};

/// Most frames handed to a subscriber's writer in one batch (one write call).
inline constexpr std::size_t SUBSCRIBER_BATCH_FRAMES = 64;

/// Most turn-state events held for a stalled subscriber before it is resynced instead.
inline constexpr std::size_t SUBSCRIBER_CONTROL_CAP = 256;

/// One event for a subscriber (defined with its encoders in hub/wire.hpp).
using wire::OutEvent;
using wire::event_name;

/// Where a subscriber stands in its seat's stream.
///
/// @par Thread safety
/// Confined to its seat's strand.
class Subscriber {
public:
    /// A subscriber that will first receive `connected` (or `resumed` at `resume_after + 1`).
    explicit Subscriber(bool cancel_on_disconnect = false) noexcept;

    /// Wakes the writer (set by the transport; called on the seat strand).
    std::function<void()> wake;

    /// Next frame position to send.
    std::uint64_t cursor{};
    /// Whether the next batch must begin with `connected` (the window, recovered:false).
    bool need_connected{true};
    /// Whether the next batch must begin with `resumed` (recovered:true, replay follows).
    bool need_resumed{false};
    /// Whether this subscriber acts as the turn's caller (cancels when it goes).
    bool cancel_on_disconnect{false};
    /// The lossy preview lane, with exact byte accounting; drops become `gap` events.
    RelayQueue previews{SUBSCRIBER_PREVIEW_LIMITS};
    /// Turn-state events, each tagged with the frame position before which it must go.
    std::deque<std::pair<std::uint64_t, std::string>> control;
    /// Frames sent, preview bytes reported lost (`gap`) and resyncs, for stats.
    std::uint64_t frames_sent{}, gap_bytes{}, resyncs{};
};

} // namespace sluice::hub
