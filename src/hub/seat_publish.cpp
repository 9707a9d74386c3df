// Seat: durable-before-published — frames go to the writer, are published once appended, in order;
// previews held behind pending frames; meta writes and syncs on the writer.
#include "seat_store.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/hub/seat.hpp>

#include <spdlog/spdlog.h>

namespace sluice::hub {

namespace net = boost::asio;

bool Seat::submit_job(Writer::Job job, Writer::Done done) {
    return opt_.writer->submit(std::move(job), strand_, std::move(done));
}

void Seat::degrade(std::string reason) {
    spdlog::error("seat {}: {}", spec_.id, reason);
    if (disk_.degraded.empty()) {
        disk_.degraded = std::move(reason);
    }
    update_summary();
}

void Seat::enqueue_frame(FramePtr frame) {
    disk_.held_previews.discard_all(/*report=*/false); // superseded by this frame
    disk_.pending.push_back(std::move(frame));
    pump_appends();
}

void Seat::pump_appends() {
    if (disk_.appending || disk_.pending.empty()) {
        return;
    }
    std::vector<FramePtr> batch(
        std::make_move_iterator(disk_.pending.begin()),
        std::make_move_iterator(disk_.pending.end()));
    disk_.pending.clear();
    if (!store_) {
        on_appended(std::move(batch), 0, make_error_code(errc::io_error));
        return;
    }
    disk_.appending = true;
    auto appended = std::make_shared<std::size_t>(0);
    auto shared_batch = std::make_shared<std::vector<FramePtr>>(std::move(batch));
    const bool queued = submit_job(
        [store = store_, shared_batch, appended]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            for (const auto& f : *shared_batch) {
                if (auto r = store->transcript.append(*f); !r) {
                    return r.error();
                }
                ++*appended;
            }
            return {};
        },
        [weak = weak_from_this(), shared_batch, appended](boost::system::error_code ec) {
            if (auto self = weak.lock()) {
                self->on_appended(std::move(*shared_batch), *appended, ec);
            }
        });
    if (!queued) {
        disk_.appending = false;
        on_appended(std::move(*shared_batch), 0, make_error_code(errc::overloaded));
    }
}

void Seat::on_appended(
    std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) {
    disk_.appending = false;
    if (appended > 0) {
        for (std::size_t i = 0; i < appended; ++i) {
            window_.append(held_form(std::move(batch[i]))); // oversize: its reference form
        }
        disk_.dirty = true;
        last_activity_ = std::chrono::system_clock::now();
        for (const auto& sub : subscribers_) {
            sub->frames_published(); // previews queued before these frames are superseded
        }
    }
    if (ec) {
        std::string reason = "transcript append failed: " + ec.message();
        if (ec == make_error_code(errc::overloaded)) {
            reason = "transcript append refused: the writer queue is full";
        }
        disk_.pending.clear(); // nothing after a failed frame is published
        disk_.held_previews.discard_all(/*report=*/false);
        degrade(reason);
        fail_turn(std::move(reason));
    }
    if (!disk_.pending.empty()) {
        pump_appends();
    } else if (!disk_.appending) {
        flush_held_previews();
        if (turns_.pending_end) {
            finish_turn(std::move(*turns_.pending_end));
        }
    }
    wake_all();
    update_summary();
}

void Seat::publish_preview(const StreamEvent& ev) {
    for (const auto& sub : subscribers_) {
        sub->push_preview(ev);
    }
}

void Seat::flush_held_previews() {
    // What the hold lane dropped (not superseded: lost) is every viewer's loss, marked in-band.
    if (const auto lost = disk_.held_previews.take_unreported_dropped(); lost > 0) {
        for (const auto& sub : subscribers_) {
            sub->note_lost(lost);
        }
    }
    while (auto ev = disk_.held_previews.pop()) {
        publish_preview(*ev);
    }
}

void Seat::push_turn_state(std::string data) {
    const auto tag = window_.end() + disk_.pending.size(); // before the next frame published
    for (const auto& sub : subscribers_) {
        sub->push_turn_state(tag, data);
    }
}

void Seat::save_meta() {
    if (disk_.meta_writing) {
        disk_.meta_again = true; // one write in flight; the newest spec follows it
        return;
    }
    disk_.meta_writing = true;
    const bool queued = submit_job(
        [dir = opt_.dir, spec = spec_]() -> boost::system::error_code {
            if (auto r = write_meta(dir, spec); !r) {
                spdlog::error("{}", r.error().message);
                return r.error().code;
            }
            return {};
        },
        [weak = weak_from_this()](boost::system::error_code ec) {
            auto self = weak.lock();
            if (!self) {
                return;
            }
            self->disk_.meta_writing = false;
            if (ec) {
                self->degrade("meta.json write failed: " + ec.message());
            }
            if (std::exchange(self->disk_.meta_again, false)) {
                self->save_meta();
            }
        });
    if (!queued) {
        disk_.meta_writing = false;
        degrade("meta.json write refused: the writer queue is full");
    }
}

void Seat::sync_transcript() {
    if (!store_ || !disk_.dirty) {
        return;
    }
    disk_.dirty = false;
    const bool queued = submit_job(
        [store = store_]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            if (auto r = store->transcript.sync(); !r) {
                return r.error();
            }
            return {};
        },
        [weak = weak_from_this()](boost::system::error_code ec) {
            if (auto self = weak.lock(); self && ec) {
                self->degrade("transcript sync failed: " + ec.message());
            }
        });
    if (!queued) {
        degrade("transcript sync refused: the writer queue is full");
    }
}

void Seat::schedule_sync() {
    if (disk_.sync_armed || closed_) {
        return;
    }
    disk_.sync_armed = true;
    sync_timer_.expires_after(opt_.sync_interval);
    sync_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        auto self = weak.lock();
        if (!self) {
            return;
        }
        self->disk_.sync_armed = false;
        if (ec) {
            return;
        }
        self->sync_transcript();
        if (self->turns_.cancel) {
            self->schedule_sync();
        }
    });
}

} // namespace sluice::hub
