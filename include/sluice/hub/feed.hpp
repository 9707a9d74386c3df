// Feed: a seat's fan-out core — its window (the ring), its viewers, the shared pages, previews and
// their loss accounting, the epoch a viewer sees. Knows no agent, file or broker.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/window.hpp>
#include <sluice/core/event.hpp>
#include <sluice/hub/partial.hpp>
#include <sluice/hub/subscriber.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::hub {

/// Publishes a feed remembers the time of (Feed::published_at). Basis: a viewer's batch is
/// taken within a few publishes of its oldest frame unless it is far behind, and then its
/// publish-to-write time is not measured (the write timeout or the lag limit tells of it).
inline constexpr std::size_t PUBLISH_STAMPS = 64;

/// A page of history: whole turns, oldest first, with a cursor for older ones.
struct HistoryPage {
    /// `{"turns":[{"first","frames":[…]}],"cursor":…,"end":…}` (wire::page_json), immutable and
    /// shared by every client asking for the same page of the same window (never copied).
    std::shared_ptr<const std::string> body;

    /// The page's JSON.
    [[nodiscard]] const std::string& json() const noexcept { return *body; }
};

/// What a viewer is told of its seat besides frames: whether a turn runs, its number, the
/// permission prompts waiting, and whether an open turn's partial message may be shown. The
/// source knows these; the feed only carries them into `connected` / `resumed`.
struct FeedHead {
    bool running{false};                ///< whether a turn runs
    bool waiting{false};                ///< whether the agent waits on the person (a prompt)
    std::uint64_t turn{};               ///< the running turn, or the last accepted one
    std::string_view permissions{"[]"}; ///< the pending prompts, a JSON array of their rows
    bool partial_open{false};           ///< whether the open turn's partial rides in a join
};

/// One seat's fan-out: frames held in the window and read by every subscriber's cursor, previews
/// pushed to every subscriber's own lossy lane, turn-state events queued in place, and the
/// `connected` and history pages built once and shared.
///
/// Exactness: any answer built here holds every frame held when it is asked for. A `connected`
/// page is reused while the window's front has not moved and the head it carries is the same —
/// the joiner is then sent the frames after the page's end from the window (SharedPage::end), so
/// the join is exact. A history page is reused only for the very window it was built from (the
/// same front and, for the newest page, the same end): nothing replays after it.
///
/// Readiness: a feed whose frames are not known yet (a session file still being opened, a
/// cluster mirror before its first copy) is not `ready()`; a viewer attached meanwhile waits,
/// with its Last-Event-ID, and starts at `replace` (resumed when that id is in the new window).
///
/// @par Thread safety
/// None: confined to its seat's strand. Frames and pages it hands out are shared and immutable.
class Feed {
public:
    /// A ready, empty feed of seat `seat` under `epoch`, holding a window of `budget`.
    Feed(std::string seat, std::string epoch, Budget budget);

    /// The window (the fan-out ring).
    [[nodiscard]] const Window& window() const noexcept { return window_; }

    /// The epoch viewers see: a seq names one frame within it.
    [[nodiscard]] const std::string& epoch() const noexcept { return epoch_; }

    /// Whether the feed's frames are known (viewers are served).
    [[nodiscard]] bool ready() const noexcept { return ready_; }

    /// Holds a frame at the window's end; its turn scan decides whether it opens a turn. Call
    /// `published` after a batch.
    void append(FramePtr frame) { window_.append(std::move(frame)); }

    /// Holds a frame whose opening was decided elsewhere (a cluster owner's scan).
    void append(FramePtr frame, bool opens) { window_.append(std::move(frame), opens); }

    /// Frames were appended: previews queued before them are superseded (not loss), and so is
    /// the partial message (the frames carry its content). The caller wakes the viewers.
    void published();

    /// When the frame at `pos` was published (by `published`, steady clock), while it is among
    /// the newest PUBLISH_STAMPS publishes of this epoch; nullopt otherwise. What a viewer's
    /// writer measures its publish-to-write time from.
    [[nodiscard]] std::optional<std::chrono::steady_clock::time_point>
    published_at(std::uint64_t pos) const noexcept;

    /// Starts the feed over with `window` under `epoch` (a conversation reset, a file opened or
    /// opened again, a mirror's copy): every cache goes, and so do the preview positions and the
    /// partial message. Waiting viewers start now (resumed when their Last-Event-ID is still in
    /// the new window). Viewers already started begin again with `connected` (recovered:false)
    /// when `restart`; otherwise they go on by cursor (the same numbering: one behind the new
    /// front is let go and resumes). The feed is ready afterwards. Wakes every viewer.
    void replace(std::string epoch, Window window, bool restart);

    /// Lets the window go (a mirror nobody watches): the next frames come with a `replace`.
    /// Positions go on from the current end. @pre no subscribers.
    void unready();

    /// Adds a subscriber. `last` is a Last-Event-ID ("<epoch>:<seq>"): if it is still in the
    /// window the subscriber resumes after it, otherwise it starts with `connected`. A feed not
    /// ready keeps it waiting until `replace`.
    void attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last);

    /// Removes a subscriber; its preview losses stay counted in `preview_dropped_bytes`.
    void detach(const std::shared_ptr<Subscriber>& sub);

    /// Appends the subscriber's next events to `out` (nothing while the feed is not ready).
    /// @return whether the subscriber reported a preview loss (the seat's figures changed).
    bool collect(Subscriber& sub, std::vector<OutEvent>& out, const FeedHead& head);

    /// Calls every subscriber's wake-up.
    void wake_all() const;

    /// Sends a preview to every viewer's lossy lane and into the open turn's partial message;
    /// counts its bytes at the current position (see `preview_offset`).
    void preview(const StreamEvent& ev);

    /// A preview that another node published `offset` bytes into the current position: bytes
    /// published there before it that never arrived are every viewer's loss (marked in-band as
    /// `gap`, and in the partial message), then it is sent as `preview` does.
    void preview_at(std::uint64_t offset, const StreamEvent& ev);

    /// Preview bytes lost before they reached the feed (a hold lane overflowed): every viewer's
    /// loss, counted at the current position too.
    void lost(std::uint64_t bytes);

    /// Preview bytes sent or lost since the last frame (at position `window().end()`): what a
    /// mirror of this feed must have received before the next preview to have missed nothing.
    [[nodiscard]] std::uint64_t preview_offset();

    /// Queues a turn-state event (`wire::turn_json`) for every viewer, to go before frame
    /// position `before`.
    void turn_state(std::uint64_t before, const std::string& data);

    /// Queues a `permission` event (`{"row":{…}}`: a hooked prompt asked or ended, which a fed
    /// seat cannot append as a frame) for every viewer, at the window's end. A viewer who joins
    /// later learns the pending prompts from `connected`.
    void permission(const std::string& data);

    /// Forgets the open turn's partial message (its turn is over).
    void clear_partial() noexcept { partial_.clear(); }

    /// The shared `connected` payload for the current window and `head` (see the class).
    [[nodiscard]] SharedPage connected(const FeedHead& head);

    /// The page of at most `turns` whole turns before position `at` (`before`: as asked; none:
    /// the newest), from the window, shared by every client asking for the same page of the same
    /// window; nothing when it reaches below the window's floor (the transcript has it).
    /// @pre `at <= window().end()`.
    [[nodiscard]] std::optional<HistoryPage>
    history(std::optional<std::uint64_t> before, std::uint64_t at, std::size_t turns);

    /// The number of subscribers (waiting ones included).
    [[nodiscard]] std::size_t subscribers() const noexcept { return subscribers_.size(); }

    /// Preview bytes reported lost (`gap`) to every viewer, those gone included.
    [[nodiscard]] std::uint64_t preview_dropped_bytes() const noexcept;

    /// Resyncs (`connected` after the first) of every viewer, those gone included.
    [[nodiscard]] std::uint64_t resyncs() const noexcept;

private:
    [[nodiscard]] std::shared_ptr<const std::string> partial(const FeedHead& head);
    void start_waiting();
    void clear_pages();

    // The shared `connected` page: the window and head it was built from.
    struct ConnectedPage {
        std::shared_ptr<const std::string> json;
        std::uint64_t first{}, end{}, bytes{};
        bool running{false};
        bool waiting{false};
        std::uint64_t turn{};
        std::string permissions;
    };

    // The last history page and the request and window it answered.
    struct HistoryCache {
        std::shared_ptr<const std::string> json;
        std::uint64_t first{}, end{};
        std::optional<std::uint64_t> before;
        std::size_t turns{};
    };

    std::string seat_;
    std::string epoch_;
    Budget budget_;
    Window window_;
    bool ready_{true};
    std::vector<std::shared_ptr<Subscriber>> subscribers_;
    // Attached while not ready, with their Last-Event-ID (also in subscribers_).
    std::vector<std::pair<std::shared_ptr<Subscriber>, std::optional<std::string>>> waiting_;
    PartialTurn partial_; // the open turn's previews since its last frame
    std::shared_ptr<const std::string> partial_cache_;
    std::uint64_t partial_cache_version_{~std::uint64_t{0}};
    ConnectedPage connected_;
    HistoryCache history_;
    // Preview bytes sent or lost at one frame position (see preview_offset).
    std::uint64_t preview_pos_{~std::uint64_t{0}};
    std::uint64_t preview_pos_bytes_{};
    std::uint64_t gone_dropped_{}; // preview losses of subscribers gone
    std::uint64_t gone_resyncs_{}; // resyncs of subscribers gone

    // The newest publishes: the window's end after each, and when (a ring; see published_at).
    struct Stamp {
        std::uint64_t end{};
        std::chrono::steady_clock::time_point at;
    };

    std::array<Stamp, PUBLISH_STAMPS> stamps_{};
    std::uint64_t stamped_{}; // publishes stamped this epoch; the newest is stamps_[(n-1) % size]
};

} // namespace sluice::hub
