// Seat: durable before published — frames go to the journal and are published into the feed once
// appended, in order; previews held behind frames still being appended.
#include <sluice/conversation/frame_ref.hpp>
#include <sluice/hub/seat.hpp>

namespace sluice::hub {

void Seat::save_meta() {
    if (mirror()) {
        return; // its owner keeps its metadata
    }
    journal_->save_meta(spec_);
}

void Seat::enqueue_frame(FramePtr frame) {
    held_previews_.discard_all(/*report=*/false); // superseded by this frame
    turn_close_.observe(*frame);
    journal_->append(std::move(frame));
}

void Seat::on_durable(
    std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) {
    const auto first_new = feed_.window().end();
    if (appended > 0) {
        for (std::size_t i = 0; i < appended; ++i) {
            feed_.append(held_form(std::move(batch[i]))); // oversize: its reference form
        }
        spec_.published = feed_.window().end();
        last_activity_ = std::chrono::system_clock::now();
        feed_.published();
        if (opt_.broker && !released_) {
            opt_.broker->published(*this, first_new); // durable and published: to the cluster
        }
    }
    if (ec) {
        held_previews_.discard_all(/*report=*/false); // nothing after a failed frame is shown
        fail_turn(journal_->degraded());
    }
    if (reset_.wanted && !journal_->appending()) {
        run_reset(); // the old epoch's frames are all in: the epoch changes now
    }
    if (!journal_->busy()) {
        flush_held_previews();
        if (turns_.pending_end) {
            finish_turn(std::move(*turns_.pending_end));
        }
    }
    wake_all();
    update_summary();
}

void Seat::publish_preview(const StreamEvent& ev) {
    if (opt_.broker && !mirror() && !released_) {
        opt_.broker->preview(*this, feed_.window().end(), feed_.preview_offset(), ev);
    }
    feed_.preview(ev);
}

void Seat::flush_held_previews() {
    // What the hold lane dropped (not superseded: lost) is every viewer's loss, marked in-band.
    if (const auto lost = held_previews_.take_unreported_dropped(); lost > 0) {
        feed_.lost(lost);
    }
    while (auto ev = held_previews_.pop()) {
        publish_preview(*ev);
    }
}

void Seat::push_turn_state(const std::string& data) {
    const auto tag = feed_.window().end() + journal_->queued(); // before the next frame
    feed_.turn_state(tag, data);
    if (opt_.broker && !released_) {
        opt_.broker->turn_state(*this, tag, data);
    }
}

} // namespace sluice::hub
