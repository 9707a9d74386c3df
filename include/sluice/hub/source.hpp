// Source: where a seat's frames come from when it hosts no conversation itself — a session file
// someone else writes (hub's FileSource), another node's seat (cluster::MirrorSource) — and
// SourceHost, the narrow part of its seat a source feeds. Header-only (two interfaces).
#pragma once

#include <sluice/hub/failure.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::hub {

class Feed;
class Journal;
class Seat;
struct FeedHead;
struct SeatOptions;
struct SeatSpec;
struct SeatSummary;

/// What a source is given of its seat: the feed it fills and the few seat facts it changes.
/// Implemented by Seat (privately: nothing else reaches these). Confined to the seat's strand.
class SourceHost {
public:
    /// The window, the viewers, the pages.
    [[nodiscard]] virtual Feed& feed() noexcept = 0;
    /// The seat's folder: a file source reads its file through it (never writes it).
    [[nodiscard]] virtual Journal& journal() noexcept = 0;
    /// Its id, name, epoch, turns: a source sets the epoch and turns it learns.
    [[nodiscard]] virtual SeatSpec& spec() noexcept = 0;
    /// The hub's settings for the seat (folder, budget, writer, broker).
    [[nodiscard]] virtual const SeatOptions& options() const noexcept = 0;
    /// The seat, for a source that hands it on (a mirror asks the broker to feed it).
    [[nodiscard]] virtual std::shared_ptr<Seat> seat() = 0;
    /// Whether the seat is closed (nothing more is fed).
    [[nodiscard]] virtual bool closed() const noexcept = 0;
    /// When the conversation was last seen to change (now, by default).
    virtual void touched(std::chrono::system_clock::time_point at) noexcept = 0;
    /// Something a viewer or the listing shows changed: viewers are woken and the summary made
    /// again.
    virtual void changed() = 0;

protected:
    SourceHost() = default;
    ~SourceHost() = default;
    SourceHost(const SourceHost&) = default;
    SourceHost& operator=(const SourceHost&) = default;
};

/// Where a fed seat's frames come from. The seat keeps its feed and asks its source only what
/// differs between sources; everything else (attach, collect, pages, resume) is the feed's.
/// Owned by its seat; every member but `kind` and `owner` is called on the seat's strand.
class Source {
public:
    /// What a source is (fixed at creation: readable from any thread).
    enum class Kind : std::uint8_t { file, mirror };

    virtual ~Source() = default;
    Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;
    Source(Source&&) = delete;
    Source& operator=(Source&&) = delete;

    [[nodiscard]] virtual Kind kind() const noexcept = 0;

    /// Given once, when the seat is made: the seat it feeds, and a weak handle of it for work
    /// that completes later (the source lives as long as its seat).
    virtual void bind(SourceHost& host, std::weak_ptr<SourceHost> weak) = 0;

    /// A viewer came while the feed is not ready: start whatever fills it.
    virtual void wanted() = 0;

    /// Whether the seat must wait for its source before it can answer a page or a frame read
    /// (a file not opened yet): then `then` (if any) runs once it has opened, and the opening
    /// is started.
    virtual bool wait_open(std::function<void()> then) = 0;

    /// What the source followed changed (a watch saw its file change).
    virtual void changed() {}

    /// Fills what a viewer's `connected` says of the turn (running, its number, an open partial).
    virtual void head(FeedHead& head) const = 0;

    /// Adds what this source knows to the seat's summary (its owner's figures, its listing).
    virtual void summarize(SeatSummary& s) const = 0;

    /// Why nothing can be written to the seat: prompts, renames, settings and resets are refused
    /// with it.
    [[nodiscard]] virtual Failure refusal() const = 0;

    /// The node that owns the seat (empty: this one). Safe from any thread.
    [[nodiscard]] virtual std::string owner() const { return {}; }

    /// The seat closes: nothing more is read.
    virtual void close() {}
};

} // namespace sluice::hub
