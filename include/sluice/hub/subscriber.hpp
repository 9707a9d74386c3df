// Subscriber: one viewer of a seat — a pure stepper over the seat's window (cursor, preview lane,
// gap accounting, turn-state queue and the resync decision). No I/O, no io_context.
#pragma once

#include <sluice/conversation/window.hpp>
#include <sluice/core/relay_queue.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/container/deque.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::hub {

/// A subscriber's preview lane is smaller than a caller's relay: a seat may have thousands of
/// viewers, and a preview is only a preview. Basis: 1,000 stalled viewers cost at most 64 MiB.
inline constexpr RelayLimits SUBSCRIBER_PREVIEW_LIMITS{
    .retained_budget = 64 * 1024,
    .coalesce_threshold = 16 * 1024,
    .forward_chunk = 16 * 1024,
};

/// What a client that never reads costs the hub: its socket buffers (kernel memory, at most
/// net.ipv4.tcp_wmem's max for the send side) plus a bounded constant, SUBSCRIBER_IDLE_BYTES:
/// its preview lane (at most SUBSCRIBER_PREVIEW_LIMITS.retained_budget, 64 KiB), its turn-state
/// queue (at most SUBSCRIBER_CONTROL_CAP short strings, ~25 KiB), the batch its writer is
/// blocked on (at most SUBSCRIBER_BATCH_FRAMES events: an owned head of ~80 bytes each and a
/// reference to a shared frame or page, never a copy), and its stream: for SSE a chain of
/// completion handlers with one read, one wait and one write in flight (~4.9 KB per idle
/// subscriber in all, bench/hub_idle_rss.py), for WebSocket its coroutine frames (a few KiB). Pages
/// and frames are shared: a page is built once per window version (see SharedPage) and a frame
/// once, so what a stalled client pins is at most the page version it was sent, which the write
/// timeout (ServerConfig::write_timeout) bounds in time. Basis: the sums above; measured by
/// bench/edges_rss.py (bench/RESULTS.md: 40 non-reading clients on a 26 MB window).
inline constexpr std::size_t SUBSCRIBER_IDLE_BYTES = 128 * 1024;

/// Most frames (and most previews) handed to a subscriber's writer in one batch.
inline constexpr std::size_t SUBSCRIBER_BATCH_FRAMES = 64;

/// A batch also ends once its frames weigh this much on the wire (at least one frame goes):
/// what a writing subscriber holds besides its socket is its batch (an event, a head and three
/// buffer references per frame, ~200 B), so a thousand subscribers writing a burst of large
/// rows at once hold ~16 batches of 1 KiB rows each, not 64. Basis: one write then fills about
/// what a fresh socket's send buffer takes (net.ipv4.tcp_wmem's default, 16 KiB), so a batch
/// is still one system call; small rows still batch by SUBSCRIBER_BATCH_FRAMES.
inline constexpr std::size_t SUBSCRIBER_BATCH_BYTES = 16 * 1024;

/// Most turn-state events held for a stalled subscriber before it is resynced instead.
inline constexpr std::size_t SUBSCRIBER_CONTROL_CAP = 256;

/// One event for a subscriber (defined with its encoders in hub/wire.hpp).
using wire::event_name;
using wire::OutEvent;

/// A `connected` page as built for one window version: the shared JSON and the window end it
/// covers. A page is reused by every subscriber that joins until the window front moves (or
/// the window has grown by a quarter of the page; see `Seat::connected_data`), so joining
/// during a turn costs no page of its own: the joiner is sent the shared page, then the frames
/// after `end` from the window, which holds them anyway.
struct SharedPage {
    std::shared_ptr<const std::string> json; ///< the payload (wire::connected_json)
    std::uint64_t end{};                     ///< the window end the page covers
};

/// What a subscriber steps over: its seat's window and head, read on the seat's strand.
struct SeatView {
    const Window* window{}; ///< the seat's window (the fan-out ring); never null
    std::string_view seat;  ///< the seat id
    std::string_view epoch; ///< the seat's epoch
    bool running{false};    ///< whether a turn runs
    bool waiting{false};    ///< whether the agent waits on the person (a prompt)
    std::uint64_t turn{};   ///< the running turn, or the last accepted one
    /// The pending permission prompts as a JSON array of their rows ("" or "[]": none).
    std::string_view permissions;
    /// The `connected` payload for the current window version, shared by every subscriber
    /// (the seat caches it; tests build it). Called only when a resync is due.
    std::function<SharedPage()> connected;
    /// The open turn's partial message as `,"partial":{…}` (PartialTurn::json), shared by every
    /// viewer joining at the same preview version; null (or unset) when there is none. A
    /// `connected`/`resumed` carries it; the previews it holds are then not sent again.
    std::function<std::shared_ptr<const std::string>()> partial;
};

/// Where one viewer stands in its seat's stream, and what it has not been sent yet.
///
/// Frames are read by cursor from the window (lossless, in order, never copied); previews
/// queue in the subscriber's own bounded lane (lossy; loss reported once as `gap` with the
/// exact bytes); turn-state events queue tagged with the frame position before which they go.
/// Let go: a cursor behind the window front (the subscriber lagged past it) makes `lagged()`
/// true and `collect` give nothing more; the transport ends the stream with a reason and the
/// client resumes by Last-Event-ID (a `connected`, recovered:false). Resync: a turn-state
/// queue over its cap makes the next batch a `connected`. Resume is all or nothing: a
/// Last-Event-ID whose seq is still in the window (or is the one just before its front)
/// gives `resumed` then the replay of everything after it; anything else gives `connected`.
///
/// @par Thread safety
/// Confined to its seat's strand (the seat calls every member there). `wake` is the only
/// callback: set by the transport, called by the seat on its strand.
class Subscriber {
public:
    /// A subscriber; `cancel_on_disconnect` makes it the turn's caller (its leaving cancels).
    explicit Subscriber(bool cancel_on_disconnect = false) noexcept;

    /// Sets the transport's wake-up (called on the seat strand when there is something new).
    void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

    /// Calls the wake-up, if one is set.
    void wake() const {
        if (wake_) {
            wake_();
        }
    }

    /// Whether this subscriber acts as the turn's caller.
    [[nodiscard]] bool cancels_on_disconnect() const noexcept { return cancel_on_disconnect_; }

    /// Decides where the subscriber starts. @param last a Last-Event-ID "<epoch>:<seq>" or none.
    /// In-window seq of this epoch → `resumed` then replay from seq + 1; else `connected`.
    void start(const Window& window, std::string_view epoch, std::optional<std::string_view> last);

    /// Frames were published: previews queued before them are superseded by them (not loss).
    void frames_published() noexcept { previews_.discard_all(/*report=*/false); }

    /// Queues a preview in the lossy lane (oldest dropped over SUBSCRIBER_PREVIEW_LIMITS).
    void push_preview(const StreamEvent& ev) { previews_.push(ev); }

    /// Counts preview bytes lost before they reached this lane (the seat's hold lane
    /// overflowed); reported in the next `gap` with the lane's own drops.
    void note_lost(std::uint64_t bytes) noexcept { lost_upstream_ += bytes; }

    /// Queues a turn-state event (`wire::turn_json`) to go before frame position `before`
    /// (the window's end when it happened). Over SUBSCRIBER_CONTROL_CAP: resync instead.
    /// `kind`: `turn`, or `permission` (a hooked prompt asked or ended: `{"row":{…}}`).
    void push_turn_state(
        std::uint64_t before,
        std::string data,
        wire::OutEvent::Kind kind = wire::OutEvent::Kind::turn);

    /// Appends the subscriber's next events to `out` (nothing when it is up to date): a
    /// resync or resume first, then up to SUBSCRIBER_BATCH_FRAMES frames with turn-state
    /// events in place, then — only once every frame is out — a gap, then previews.
    void collect(const SeatView& view, std::vector<OutEvent>& out);

    /// Frames sent so far.
    [[nodiscard]] std::uint64_t frames_sent() const noexcept { return frames_sent_; }

    /// Preview bytes reported lost (`gap`) so far.
    [[nodiscard]] std::uint64_t gap_bytes() const noexcept { return gap_bytes_; }

    /// Times resynced with `connected` after the first.
    [[nodiscard]] std::uint64_t resyncs() const noexcept { return resyncs_; }

    /// Preview bytes held in the lane now (at most SUBSCRIBER_PREVIEW_LIMITS.retained_budget).
    [[nodiscard]] std::uint64_t preview_retained() const noexcept {
        return previews_.counters().retained;
    }

    /// The most preview bytes the lane has held at once (its budget bounds it).
    [[nodiscard]] std::uint64_t preview_peak_retained() const noexcept {
        return previews_.counters().peak_retained;
    }

    /// Drops lost but not yet reported (counted by the seat when the subscriber leaves).
    [[nodiscard]] std::uint64_t take_unreported_dropped() noexcept {
        return previews_.take_unreported_dropped() + std::exchange(lost_upstream_, 0);
    }

    /// Whether the subscriber fell behind the window front and is to be let go (its stream
    /// ends with a reason; the client resumes by Last-Event-ID).
    [[nodiscard]] bool lagged() const noexcept { return lagged_; }

    /// The next frame position to send.
    [[nodiscard]] std::uint64_t cursor() const noexcept { return cursor_; }

private:
    void emit_connected(const SeatView& view, std::vector<OutEvent>& out);
    void emit_resumed(const SeatView& view, std::vector<OutEvent>& out);
    void take_partial(const SeatView& view, OutEvent& ev);
    void emit_frames(const SeatView& view, std::vector<OutEvent>& out);
    void emit_previews(std::vector<OutEvent>& out);

    std::function<void()> wake_;
    std::uint64_t cursor_{};
    bool need_connected_{true};
    bool need_resumed_{false};
    bool cancel_on_disconnect_{false};
    bool lagged_{false};
    RelayQueue previews_{SUBSCRIBER_PREVIEW_LIMITS};

    struct Control {
        std::uint64_t before{};
        wire::OutEvent::Kind kind{wire::OutEvent::Kind::turn};
        std::string data;
    };

    boost::container::deque<Control> control_;
    std::uint64_t lost_upstream_{};
    std::uint64_t frames_sent_{};
    std::uint64_t gap_bytes_{};
    std::uint64_t resyncs_{};
};

} // namespace sluice::hub
