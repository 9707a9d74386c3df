// Subscriber: the pure stepper over a seat's window — cursor, preview lane, gap, resync decision.
#include "ids.hpp"

#include <sluice/core/assert.hpp>
#include <sluice/hub/subscriber.hpp>

namespace sluice::hub {

Subscriber::Subscriber(bool cancel_on_disconnect) noexcept
    : cancel_on_disconnect_(cancel_on_disconnect) {
}

void Subscriber::start(
    const Window& window, std::string_view epoch, std::optional<std::string_view> last) {
    need_connected_ = true;
    need_resumed_ = false;
    if (!last) {
        return;
    }
    const auto id = parse_event_id(*last);
    if (!id || id->first != epoch) {
        return; // malformed or another epoch: the window, recovered:false
    }
    const std::int64_t seq = id->second;
    const auto first = static_cast<std::int64_t>(window.first());
    const auto end = static_cast<std::int64_t>(window.end());
    // seq + 1 is the next frame to send; it must be held (or be the end) for a whole replay.
    if (seq + 1 >= first && seq < end) {
        cursor_ = static_cast<std::uint64_t>(seq + 1);
        need_connected_ = false;
        need_resumed_ = true;
    }
}

void Subscriber::push_turn_state(std::uint64_t before, std::string data, OutEvent::Kind kind) {
    if (need_connected_) {
        return; // the connected payload carries the state
    }
    if (control_.size() >= SUBSCRIBER_CONTROL_CAP) {
        need_connected_ = true; // too far behind: a resync carries the state
        ++resyncs_;
        control_.clear();
        return;
    }
    control_.push_back(Control{before, kind, std::move(data)});
}

void Subscriber::collect(const SeatView& view, std::vector<OutEvent>& out) {
    const Window& window = *view.window;
    if (lagged_ || (!need_connected_ && cursor_ < window.first())) {
        lagged_ = true; // fell behind the window front: let go, it resumes by Last-Event-ID
        return;
    }
    if (need_connected_) {
        emit_connected(view, out);
        return;
    }
    if (need_resumed_) {
        emit_resumed(view, out);
    }
    emit_frames(view, out);
    if (cursor_ < window.end() || !control_.empty()) {
        return; // previews only once the frames are out
    }
    emit_previews(out);
}

void Subscriber::emit_connected(const SeatView& view, std::vector<OutEvent>& out) {
    auto page = view.connected();
    const auto end = page.end;
    SLUICE_INVARIANT(
        end >= view.window->first() && end <= view.window->end(),
        "a connected page covers a window end still held");
    OutEvent ev;
    ev.kind = OutEvent::Kind::connected;
    ev.id = std::string(view.epoch) + ":" + std::to_string(static_cast<std::int64_t>(end) - 1);
    ev.shared = std::move(page.json);
    take_partial(view, ev);
    out.push_back(std::move(ev));
    cursor_ = end;
    need_connected_ = false;
    need_resumed_ = false;
    control_.clear();
}

void Subscriber::take_partial(const SeatView& view, OutEvent& ev) {
    if (!view.partial) {
        return;
    }
    ev.partial = view.partial();
    if (ev.partial) {
        // Every preview queued here was published after the last frame, so the partial holds
        // it (or counts it in missing_bytes): sending it again would show it twice.
        previews_.discard_all(/*report=*/false);
    }
}

void Subscriber::emit_resumed(const SeatView& view, std::vector<OutEvent>& out) {
    OutEvent ev;
    ev.kind = OutEvent::Kind::resumed;
    ev.data = wire::resumed_json(wire::SeatHead{
        view.seat,
        view.epoch,
        static_cast<std::int64_t>(cursor_) - 1,
        view.running,
        view.turn,
        view.permissions,
        view.waiting});
    take_partial(view, ev);
    out.push_back(std::move(ev));
    need_resumed_ = false;
}

void Subscriber::emit_frames(const SeatView& view, std::vector<OutEvent>& out) {
    const Window& window = *view.window;
    const std::string prefix = std::string(view.epoch) + ":";
    std::size_t frames = 0;
    std::size_t bytes = 0;
    while (frames < SUBSCRIBER_BATCH_FRAMES && bytes < SUBSCRIBER_BATCH_BYTES) {
        if (!control_.empty() && cursor_ >= control_.front().before) {
            OutEvent ev;
            ev.kind = control_.front().kind;
            ev.data = std::move(control_.front().data);
            control_.pop_front();
            out.push_back(std::move(ev));
            continue;
        }
        if (cursor_ >= window.end()) {
            break;
        }
        OutEvent ev;
        ev.kind = OutEvent::Kind::frame;
        ev.seq = cursor_;
        ev.id = prefix + std::to_string(cursor_);
        ev.frame = window.at(cursor_);
        bytes += ev.frame ? ev.frame->wire_bytes() : 0;
        out.push_back(std::move(ev));
        ++cursor_;
        ++frames_sent_;
        ++frames;
    }
}

void Subscriber::emit_previews(std::vector<OutEvent>& out) {
    if (const auto dropped = take_unreported_dropped(); dropped > 0) {
        OutEvent ev;
        ev.kind = OutEvent::Kind::gap;
        ev.data = wire::gap_json(dropped);
        gap_bytes_ += dropped;
        out.push_back(std::move(ev));
    }
    for (std::size_t i = 0; i < SUBSCRIBER_BATCH_FRAMES; ++i) {
        auto p = previews_.pop();
        if (!p) {
            break;
        }
        OutEvent ev;
        ev.kind = OutEvent::Kind::preview;
        ev.data = wire::preview_json(*p);
        out.push_back(std::move(ev));
    }
}

} // namespace sluice::hub
