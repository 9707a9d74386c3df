// Seat: durable-before-published — frames go to the writer, are published once appended, in order;
// previews held behind pending frames; meta writes and syncs on the writer.
#include "seat_store.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/seat.hpp>

#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

namespace sluice::hub {

bool Seat::submit_job(Writer::Job job, Writer::Done done) {
    return opt_.writer->submit(std::move(job), strand_, std::move(done));
}

void Seat::degrade(std::string reason, errc code) {
    spdlog::error("seat {}: {}", spec_.id, reason);
    ++disk_.write_errors;
    if (disk_.degraded.empty()) {
        disk_.degraded = std::move(reason);
        disk_.degraded_code = code;
    }
    update_summary();
}

void Seat::enqueue_frame(FramePtr frame) {
    disk_.held_previews.discard_all(/*report=*/false); // superseded by this frame
    turn_close_.observe(*frame);
    disk_.pending.push_back(std::move(frame));
    pump_appends();
}

// pump_appends and on_appended call each other, at most one level deep: pump_appends calls
// on_appended directly only with an error, and on an error on_appended clears what is pending,
// so it does not pump again; the normal path resumes from the writer's completion.
// NOLINTNEXTLINE(misc-no-recursion)
void Seat::pump_appends(bool force) {
    // One batch on the writer at a time (the rest batch behind it), unless `force` (close):
    // the writer runs jobs in order, so a second batch still lands after the first.
    if ((disk_.appending > 0 && !force) || disk_.pending.empty() || (reset_.wanted && !force)) {
        return; // a reset waits for the batches in flight: what is pending is the new epoch's
    }
    std::vector<FramePtr> batch(
        std::make_move_iterator(disk_.pending.begin()),
        std::make_move_iterator(disk_.pending.end()));
    disk_.pending.clear();
    if (!store_) {
        on_appended(std::move(batch), 0, make_error_code(errc::io_error));
        return;
    }
    ++disk_.appending;
    auto appended = std::make_shared<std::size_t>(0);
    auto shared_batch = std::make_shared<std::vector<FramePtr>>(std::move(batch));
    const bool queued = submit_job(
        [store = store_, shared_batch, appended]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            if (store->broken) {
                return store->broken; // nothing is appended after a failed frame
            }
            if (!store->marked) {
                // Frames are about to be published unsynced: a crash now leaves the marker,
                // and the next open knows the high-water mark is not exact (seat.cpp).
                if (auto r = safe_write(store->marker, store->boot); !r) {
                    store->broken = r.error();
                    return r.error();
                }
                store->marked = true;
            }
            for (const auto& f : *shared_batch) {
                if (auto r = store->transcript.append(*f); !r) {
                    store->broken = r.error();
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
        // on_appended counts down the batch counted above.
        on_appended(std::move(*shared_batch), 0, make_error_code(errc::overloaded));
    }
}

// NOLINTNEXTLINE(misc-no-recursion): one level deep at most, see pump_appends.
void Seat::on_appended(
    std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) {
    --disk_.appending;
    const auto first_new = window_.end();
    bool oversize = false;
    if (appended > 0) {
        for (std::size_t i = 0; i < appended; ++i) {
            oversize = oversize || batch[i]->wire_bytes() > FRAME_INLINE_MAX_BYTES;
            window_.append(held_form(std::move(batch[i]))); // oversize: its reference form
        }
        disk_.dirty = true;
        spec_.published = window_.end();
        last_activity_ = std::chrono::system_clock::now();
        for (const auto& sub : subscribers_) {
            sub->frames_published(); // previews queued before these frames are superseded
        }
        partial_.clear(); // so is the partial message: the frames carry its content
        if (opt_.broker && !released_) {
            opt_.broker->published(*this, first_new); // durable and published: to the cluster
        }
    }
    if (ec && disk_.degraded.empty()) {
        std::string reason = "transcript append failed: " + ec.message();
        if (ec == make_error_code(errc::overloaded)) {
            reason = "transcript append refused: the writer queue is full";
        }
        disk_.pending.clear(); // nothing after a failed frame is published
        disk_.held_previews.discard_all(/*report=*/false);
        degrade(reason, write_errc(ec));
        fail_turn(std::move(reason));
    } else if (ec) {
        disk_.pending.clear();
        disk_.held_previews.discard_all(/*report=*/false);
        fail_turn(disk_.degraded);
    }
    if (reset_.wanted && disk_.appending == 0) {
        run_reset(); // the old epoch's frames are all in: the epoch changes now
    }
    if (!disk_.pending.empty()) {
        pump_appends();
    } else if (disk_.appending == 0) {
        flush_held_previews();
        if (turns_.pending_end) {
            finish_turn(std::move(*turns_.pending_end));
        }
    }
    wake_all();
    update_summary();
#if defined(__GLIBC__)
    if (oversize) {
        // The whole frame is gone (the window holds its reference form): hand the allocator's free
        // pages back to the system, on the writer (it takes milliseconds). glibc raises its mmap
        // threshold after a large free, so the megabytes of an oversize frame's parse, row and JSON
        // come from the heap and would otherwise stay resident (bench/RESULTS.md, issue 11).
        (void)submit_job(
            [] {
                ::malloc_trim(0);
                return boost::system::error_code{};
            },
            [](boost::system::error_code) {});
    }
#endif
}

void Seat::publish_preview(const StreamEvent& ev) {
    partial_.add(ev);
    if (opt_.broker && !mirror() && !released_) {
        if (preview_pos_ != window_.end()) {
            preview_pos_ = window_.end();
            preview_pos_bytes_ = 0;
        }
        opt_.broker->preview(*this, preview_pos_, preview_pos_bytes_, ev);
        preview_pos_bytes_ += preview_bytes(ev).value_or(0);
    }
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
        if (preview_pos_ != window_.end()) {
            preview_pos_ = window_.end();
            preview_pos_bytes_ = 0;
        }
        preview_pos_bytes_ += lost; // lost for the other nodes' viewers too
    }
    while (auto ev = disk_.held_previews.pop()) {
        publish_preview(*ev);
    }
}

void Seat::push_turn_state(const std::string& data) {
    const auto tag = window_.end() + disk_.pending.size(); // before the next frame published
    for (const auto& sub : subscribers_) {
        sub->push_turn_state(tag, data);
    }
    if (opt_.broker && !released_) {
        opt_.broker->turn_state(*this, tag, data);
    }
}

void Seat::save_meta() {
    if (mirror()) {
        return; // its owner keeps its metadata
    }
    if (disk_.meta_writing) {
        disk_.meta_again = true; // one write in flight; the newest spec follows it
        return;
    }
    disk_.meta_writing = true;
    auto why = std::make_shared<std::string>();
    const bool queued = submit_job(
        [dir = opt_.dir, spec = spec_, why]() -> boost::system::error_code {
            if (auto r = write_meta(dir, spec); !r) {
                *why = r.error().message; // the file and the OS reason; the old file stays
                return r.error().code;
            }
            return {};
        },
        [weak = weak_from_this(), why](boost::system::error_code ec) {
            auto self = weak.lock();
            if (!self) {
                return;
            }
            self->disk_.meta_writing = false;
            if (ec) {
                self->degrade(*why, write_errc(ec));
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

void Seat::sync_transcript(bool clean) {
    if (!store_ || !read_only_.empty() || (!disk_.dirty && !clean)) {
        return;
    }
    disk_.dirty = false;
    // `clean`: no turn runs and nothing waits: after the sync the high-water mark is exact, so
    // it goes to meta.json and the unsynced marker goes away (only if frames were appended).
    const bool queued = submit_job(
        [store = store_, clean, dir = opt_.dir, spec = spec_]() mutable
        -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            if (auto r = store->transcript.sync(); !r) {
                if (!store->broken) {
                    store->broken = r.error();
                }
                return r.error();
            }
            if (!clean || !store->marked || store->broken) {
                return {};
            }
            spec.published = store->transcript.frame_count();
            if (auto w = write_meta(dir, spec); !w) {
                return w.error().code;
            }
            if (::unlink(store->marker.c_str()) != 0) {
                return last_os_error();
            }
            store->marked = false;
            return {};
        },
        [weak = weak_from_this()](boost::system::error_code ec) {
            if (auto self = weak.lock(); self && ec) {
                self->degrade("transcript sync failed: " + ec.message(), write_errc(ec));
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
