// Broker: what a seat tells the cluster engine (scale-out, `--redis`), behind one narrow interface.
#pragma once

#include <sluice/core/event.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace sluice::hub {

class Seat;

/// The hub's hooks for a cluster engine. Without one (the single-node default) nothing calls
/// out. The seat calls these on its strand, after the fact: frames are published (and durable)
/// before `published` runs.
///
/// @par Thread safety
/// Called from many seats' strands at once: an implementation is safe from any thread. It must
/// not block: it starts its I/O and returns.
class Broker {
public:
    virtual ~Broker() = default;

    /// Frames from position `first` to `seat.window().end()` were appended to the owner's
    /// transcript and published in its window (on the seat's strand).
    virtual void published(Seat& seat, std::uint64_t first) = 0;

    /// A turn-state event (`wire::turn_json`) went to the seat's viewers, to be shown before
    /// frame position `before` (pub/sub only, never in the stream).
    virtual void turn_state(Seat& seat, std::uint64_t before, const std::string& data) = 0;

    /// A preview went to the seat's viewers (pub/sub only, lossy, never in the stream): it
    /// follows frame position `pos` - 1, and `offset` preview bytes were published (or lost in
    /// the seat's hold lane) at that position before it, so a mirror that missed some knows
    /// how many (a `gap`) and that a frame at `pos` supersedes them.
    virtual void
    preview(Seat& seat, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) = 0;

    /// A mirror seat (owned by another node) got its first viewer: the engine starts feeding it
    /// (`Seat::mirror_reset` / `Seat::mirror_append`).
    virtual void mirror_wanted(const std::shared_ptr<Seat>& seat) = 0;
};

} // namespace sluice::hub
