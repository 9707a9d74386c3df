// Journal: a seat's transcript and meta.json on disk — open and recovery, batched appends on the
// writer, syncs, metadata, reset archives, page and frame reads, the degraded state.
#include "ids.hpp"
#include "journal_store.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/hub/archives.hpp>
#include <sluice/hub/journal.hpp>
#include <sluice/hub/turn_close.hpp>
#include <sluice/hub/wire.hpp>

#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace sluice::hub {

std::string boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

std::shared_ptr<Journal> Journal::make(
    std::string seat,
    strand_type strand,
    std::shared_ptr<Writer> writer,
    std::filesystem::path dir,
    std::chrono::milliseconds sync_interval) {
    return std::shared_ptr<Journal>(new Journal(
        std::move(seat), std::move(strand), std::move(writer), std::move(dir), sync_interval));
}

Journal::Journal(
    std::string seat,
    strand_type strand,
    std::shared_ptr<Writer> writer,
    std::filesystem::path dir,
    std::chrono::milliseconds sync_interval)
    : seat_(std::move(seat))
    , strand_(std::move(strand))
    , writer_(std::move(writer))
    , dir_(std::move(dir))
    , sync_interval_(sync_interval)
    , sync_timer_(strand_) {
    SLUICE_INVARIANT(writer_ != nullptr, "a journal needs the hub's writer");
}

Journal::~Journal() = default;

// ---- opening -------------------------------------------------------------------------------

Result<Window> Journal::open(SeatSpec& spec, Budget budget) {
    const auto file = dir_ / "transcript.jsonl";
    if (std::error_code aec;
        std::filesystem::exists(dir_ / ("transcript." + spec.epoch + ".jsonl"), aec)) {
        // A conversation reset archived this epoch's transcript, then the hub stopped before
        // meta.json took the new epoch (`archive`): finish it, so the seat is reset.
        const auto old = spec.epoch;
        spec.epoch = new_id("e");
        spec.published = 0;
        spec.unsynced = false;
        spec.session_id.clear();
        if (auto w = write_meta(dir_, spec); !w) {
            return w.error();
        }
        spdlog::warn(
            "seat {}: finished a conversation reset the hub left half-done: epoch {} becomes {}",
            spec.id,
            old,
            spec.epoch);
    }
    auto tr = Transcript::open(file);
    if (!tr && write_errc(tr.error()) == errc::read_only) {
        // A read-only data directory: history and streams work; prompts are refused.
        read_only_ = "the data directory is read-only (" + tr.error().message()
                     + "): history and streams only";
        TranscriptOptions ro;
        ro.read_only = true;
        ro.write_index = false;
        tr = Transcript::open(file, ro);
    }
    if (!tr) {
        return Failure{tr.error(), "cannot open " + file.string() + ": " + tr.error().message()};
    }
    auto win = tr->load_window(budget);
    if (!win) {
        return Failure{win.error(), "cannot read " + file.string() + ": " + win.error().message()};
    }
    bool renumbered = false;
    if (!tr->bad_lines().empty() && tr->index_was_valid() && read_only_.empty()) {
        // Damage inside lines the index counted: number again by a full validating scan.
        renumbered = true;
        if (auto b = tr->build_index(); !b) {
            return Failure{b.error(), "cannot index " + file.string() + ": " + b.error().message()};
        }
        win = tr->load_window(budget);
        if (!win) {
            return Failure{
                win.error(), "cannot read " + file.string() + ": " + win.error().message()};
        }
    }
    warnings_ = tr->bad_lines();
    store_ = std::make_shared<Store>(std::move(*tr), dir_);
    if (read_only_.empty()) {
        recover(spec, *win, renumbered);
    }
    return std::move(*win);
}

void Journal::recover(SeatSpec& spec, Window& window, bool renumbered) {
    auto& t = store_->transcript;
    std::error_code fec;
    const bool marked = std::filesystem::exists(store_->marker, fec);
    std::string lost =
        renumbered ? "damaged lines were skipped and the frames numbered again" : std::string();
    if (marked) {
        std::ifstream in(store_->marker);
        std::string id;
        std::getline(in, id);
        if (id.empty() || id != store_->boot) {
            // Not this boot: the page cache is gone, so unsynced frames may be lost (a power
            // cut); within one boot a crash loses nothing written (durable before published).
            lost = "the machine restarted while frames were unsynced";
        }
    }
    if (spec.published > t.frame_count()) {
        lost = "the transcript holds " + std::to_string(t.frame_count()) + " frames, "
               + std::to_string(spec.published) + " were published";
    }
    if (!lost.empty()) {
        const auto old = spec.epoch;
        spec.epoch = new_id("e"); // a seq never names two frames within one epoch
        spdlog::warn(
            "seat {}: {}: epoch {} becomes {} (every client resyncs)",
            spec.id,
            lost,
            old,
            spec.epoch);
    }
    std::size_t closed_rows = 0;
    if (marked) {
        // The hub stopped mid-turn (the marker is removed at every clean turn end): close the
        // newest turn before anything is served.
        TurnClose tc;
        const auto openings = window.openings();
        const auto from = openings.empty() ? window.first() : openings.back();
        for (auto pos = from; pos < window.end(); ++pos) {
            tc.observe(*window.at(pos));
        }
        for (auto& row : tc.closing_rows(INTERRUPTED_TOOL_TEXT, INTERRUPTED_TEXT, spec.id)) {
            auto frame = Frame::from_row(std::move(row));
            if (auto r = t.append(*frame); !r) {
                store_->broken = r.error();
                degrade(
                    "cannot close the interrupted turn: transcript append failed: "
                        + r.error().message(),
                    write_errc(r.error()));
                break;
            }
            window.append(std::move(frame));
            ++closed_rows;
        }
        if (closed_rows > 0) {
            spdlog::warn(
                "seat {}: closed a turn the hub left open ({} rows)", spec.id, closed_rows);
        }
    }
    if (!marked && lost.empty() && spec.published == t.frame_count()) {
        return;
    }
    if (auto r = t.sync(); !r) {
        store_->broken = r.error();
        degrade("transcript sync failed: " + r.error().message(), write_errc(r.error()));
        return;
    }
    spec.published = t.frame_count();
    if (auto w = write_meta(dir_, spec); !w) {
        degrade(w.error().message, write_errc(w.error().code));
        return;
    }
    if (!store_->broken) {
        (void)::unlink(store_->marker.c_str());
    }
}

std::optional<Window> Journal::open_read_only(Budget budget) {
    TranscriptOptions ro;
    ro.read_only = true;
    ro.write_index = false;
    auto tr = Transcript::open(dir_ / "transcript.jsonl", ro);
    if (!tr) {
        return std::nullopt;
    }
    std::optional<Window> window;
    if (auto win = tr->load_window(budget)) {
        window = std::move(*win);
    }
    warnings_ = tr->bad_lines();
    store_ = std::make_shared<Store>(std::move(*tr), dir_);
    return window;
}

void Journal::adopt(Transcript t) {
    store_ = std::make_shared<Store>(std::move(t), dir_);
    frame_text_ = {};
}

// ---- appends -------------------------------------------------------------------------------

bool Journal::submit(Writer::Job job, Writer::Done done) {
    return writer_->submit(std::move(job), strand_, std::move(done));
}

void Journal::degrade(std::string reason, errc code) {
    spdlog::error("seat {}: {}", seat_, reason);
    ++write_errors_;
    if (degraded_.empty()) {
        degraded_ = std::move(reason);
        degraded_code_ = code;
    }
    if (auto ev = events_.lock()) {
        ev->on_write_failed();
    }
}

std::optional<Failure> Journal::not_writable() const {
    if (!read_only_.empty()) {
        return Failure::of(errc::read_only, "the seat is read-only: " + read_only_);
    }
    if (!degraded_.empty()) {
        // Its transcript takes no more frames (nothing after a failed write): restart the hub
        // once the disk is fixed; the seat reopens whole.
        return Failure::of(
            degraded_code_ == errc::insufficient_storage ? errc::insufficient_storage
                                                         : errc::conflict,
            "the seat is degraded: " + degraded_);
    }
    return std::nullopt;
}

void Journal::append(FramePtr frame) {
    pending_.push_back(std::move(frame));
    flush();
}

void Journal::prepend(FramePtr frame) {
    pending_.push_front(std::move(frame));
}

// flush and appended call each other, at most one level deep: flush calls appended directly only
// with an error, and on an error appended clears what is pending, so it does not flush again; the
// normal path resumes from the writer's completion.
// NOLINTNEXTLINE(misc-no-recursion)
void Journal::flush(bool force) {
    if ((appending_ > 0 && !force) || pending_.empty() || (held_ && !force)) {
        return;
    }
    std::vector<FramePtr> batch(
        std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    pending_.clear();
    ++appending_;
    if (!store_) {
        appended(std::move(batch), 0, make_error_code(errc::io_error));
        return;
    }
    auto count = std::make_shared<std::size_t>(0);
    auto shared_batch = std::make_shared<std::vector<FramePtr>>(std::move(batch));
    const bool queued = submit(
        [store = store_, shared_batch, count]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            if (store->broken) {
                return store->broken; // nothing is appended after a failed frame
            }
            if (!store->marked) {
                // Frames are about to be published unsynced: a crash now leaves the marker,
                // and the next open knows the high-water mark is not exact (`recover`).
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
                ++*count;
            }
            return {};
        },
        [weak = weak_from_this(), shared_batch, count](boost::system::error_code ec) {
            if (auto self = weak.lock()) {
                self->appended(std::move(*shared_batch), *count, ec);
            }
        });
    if (!queued) {
        appended(std::move(*shared_batch), 0, make_error_code(errc::overloaded));
    }
}

// NOLINTNEXTLINE(misc-no-recursion): one level deep at most, see flush.
void Journal::appended(
    std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) {
    --appending_;
    bool oversize = false;
    for (std::size_t i = 0; i < appended; ++i) {
        oversize = oversize || batch[i]->wire_bytes() > FRAME_INLINE_MAX_BYTES;
    }
    if (appended > 0) {
        dirty_ = true;
    }
    if (ec) {
        pending_.clear(); // nothing after a failed frame is appended
        if (degraded_.empty()) {
            degrade(
                ec == make_error_code(errc::overloaded)
                    ? std::string("transcript append refused: the writer queue is full")
                    : "transcript append failed: " + ec.message(),
                write_errc(ec));
        }
    }
    if (auto ev = events_.lock()) {
        ev->on_durable(std::move(batch), appended, ec);
    }
    flush();
#if defined(__GLIBC__)
    if (oversize) {
        // The whole frame is gone (the window holds its reference form): hand the allocator's free
        // pages back to the system, on the writer (it takes milliseconds). glibc raises its mmap
        // threshold after a large free, so the megabytes of an oversize frame's parse, row and JSON
        // come from the heap and would otherwise stay resident (bench/RESULTS.md, issue 11).
        (void)submit(
            [] {
                ::malloc_trim(0);
                return boost::system::error_code{};
            },
            [](boost::system::error_code) {});
    }
#endif
}

// ---- metadata and syncs --------------------------------------------------------------------

void Journal::save_meta(const SeatSpec& spec) {
    if (meta_writing_) {
        meta_next_ = spec; // one write in flight; the newest spec follows it
        return;
    }
    meta_writing_ = true;
    auto why = std::make_shared<std::string>();
    const bool queued = submit(
        [dir = dir_, spec, why]() -> boost::system::error_code {
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
            self->meta_writing_ = false;
            if (ec) {
                self->degrade(*why, write_errc(ec));
            }
            if (auto next = std::exchange(self->meta_next_, std::nullopt)) {
                self->save_meta(*next);
            }
        });
    if (!queued) {
        meta_writing_ = false;
        degrade("meta.json write refused: the writer queue is full");
    }
}

void Journal::sync(const SeatSpec& spec, bool clean) {
    if (!store_ || !read_only_.empty() || (!dirty_ && !clean)) {
        return;
    }
    dirty_ = false;
    const bool queued = submit(
        [store = store_, clean, dir = dir_, spec = spec]() mutable -> boost::system::error_code {
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

void Journal::sync_periodically(bool on) {
    syncing_ = on;
    if (on) {
        arm_sync();
    }
}

void Journal::arm_sync() {
    if (sync_armed_ || !syncing_) {
        return;
    }
    sync_armed_ = true;
    sync_timer_.expires_after(sync_interval_);
    sync_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        auto self = weak.lock();
        if (!self) {
            return;
        }
        self->sync_armed_ = false;
        if (ec) {
            return;
        }
        self->sync(SeatSpec{}, /*clean=*/false); // a plain sync reads no metadata
        self->arm_sync();
    });
}

void Journal::archive(
    const SeatSpec& spec,
    std::string to_name,
    std::function<void(boost::system::error_code, const std::string&)> done) {
    auto why = std::make_shared<std::string>();
    const bool queued = submit(
        [store = store_, dir = dir_, spec, archived = std::move(to_name), why]()
            -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            if (store->broken) {
                *why = "an earlier write failed";
                return store->broken;
            }
            const auto fail = [&](boost::system::error_code ec, std::string what) {
                store->broken = ec; // nothing more is appended to a transcript in doubt
                *why = std::move(what) + ": " + ec.message();
                return ec;
            };
            if (auto r = store->transcript.sync(); !r) {
                return fail(r.error(), "cannot sync the transcript");
            }
            const auto path = store->transcript.path();
            const auto to = dir / archived;
            std::error_code fec;
            std::filesystem::rename(
                Transcript::index_path(path), Transcript::index_path(to), fec); // may be absent
            std::filesystem::rename(path, to, fec);
            if (fec) {
                return fail(
                    boost::system::error_code(fec.value(), boost::system::system_category()),
                    "cannot archive the transcript as " + to.string());
            }
            // Its age (retain_archives_days) counts from the reset, not from its last append.
            std::filesystem::last_write_time(
                to, std::filesystem::file_time_type::clock::now(), fec);
            auto fresh = Transcript::open(path);
            if (!fresh) {
                return fail(fresh.error(), "cannot create " + path.string());
            }
            store->transcript = std::move(*fresh);
            if (auto w = write_meta(dir, spec); !w) { // its directory fsync covers the renames
                return fail(w.error().code, w.error().message);
            }
            if (::unlink(store->marker.c_str()) != 0 && errno != ENOENT) {
                return fail(last_os_error(), "cannot remove " + store->marker.string());
            }
            store->marked = false;
            return {};
        },
        [weak = weak_from_this(), why, done](boost::system::error_code ec) {
            if (auto self = weak.lock()) {
                self->archived(ec, *why, done);
            }
        });
    if (!queued) {
        {
            std::lock_guard lock(store_->mu);
            store_->broken = make_error_code(errc::overloaded); // nothing lands in the old file
        }
        archived(make_error_code(errc::overloaded), "the writer queue is full", done);
    }
    frame_text_ = {}; // the numbering starts again
}

void Journal::archived(
    boost::system::error_code ec,
    const std::string& why,
    const std::function<void(boost::system::error_code, const std::string&)>& done) {
    if (ec) {
        degrade("conversation reset failed: " + why, write_errc(ec));
    }
    done(ec, why);
}

void Journal::close(const SeatSpec& spec, bool remove, std::filesystem::path archive_to) {
    syncing_ = false;
    sync_timer_.cancel();
    sync(spec, /*clean=*/true);
    if (!remove || dir_.empty()) {
        return;
    }
    // After the last append and sync: the writer runs jobs in order.
    (void)submit(
        [dir = dir_, to = archive_to] {
            const auto ec = retire_folder(dir, to);
            return boost::system::error_code(ec.value(), boost::system::system_category());
        },
        [dir = dir_, to = archive_to](boost::system::error_code ec) {
            if (ec) {
                const auto as = to.empty() ? std::string() : " as " + to.string();
                spdlog::error(
                    "cannot retire the seat folder {}{}: {}", dir.string(), as, ec.message());
            }
        });
}

// ---- reading -------------------------------------------------------------------------------

Result<std::shared_ptr<const std::string>> Journal::frame_text(std::uint64_t seq) {
    if (frame_text_.second && frame_text_.first == seq) {
        return frame_text_.second;
    }
    if (!store_) {
        return Failure::of(errc::io_error, "the transcript of this seat cannot be read");
    }
    std::lock_guard lock(store_->mu);
    auto text = store_->transcript.frame_json(seq);
    if (!text) {
        const bool missing = text.error() == make_error_code(errc::not_found);
        return Failure{
            text.error(),
            (missing ? "cannot find that frame: " : "cannot read that frame: ")
                + text.error().message()};
    }
    frame_text_ = {seq, std::make_shared<const std::string>(std::move(*text))};
    return frame_text_.second;
}

bool Journal::read_page(
    std::uint64_t at,
    std::size_t turns,
    std::function<void(Result<std::shared_ptr<const std::string>>)> done) {
    if (!store_) {
        done(Failure::of(errc::io_error, "the transcript of this seat cannot be read"));
        return true;
    }
    using Answer = Result<std::shared_ptr<const std::string>>;
    auto out = std::make_shared<std::optional<Answer>>();
    return submit(
        [store = store_, at, turns, out]() -> boost::system::error_code {
            std::lock_guard lock(store->mu);
            auto page = store->transcript.page(at, turns);
            if (!page) {
                out->emplace(
                    Failure{page.error(), "cannot read that page: " + page.error().message()});
            } else {
                out->emplace(std::make_shared<const std::string>(wire::page_json(*page, at)));
            }
            return {};
        },
        [out, done = std::move(done)](boost::system::error_code) {
            done(out->has_value() ? std::move(**out) : Answer(Failure::of(errc::io_error, "lost")));
        });
}

} // namespace sluice::hub
