// Seat: turns, frames, the window as the fan-out ring, and the bounded intake from the agent.
#include <sluice/conversation/transcript.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/wire.hpp>

#include "ids.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>
#include <boost/json.hpp>

#include <algorithm>
#include <fstream>

namespace sluice::hub {

namespace json = boost::json;
namespace net = boost::asio;

const char* state_name(SeatState s) noexcept {
    switch (s) {
    case SeatState::idle: return "idle";
    case SeatState::running: return "running";
    case SeatState::queued: return "queued";
    }
    return "idle";
}

Subscriber::Subscriber(bool cancel_on_disconnect_) noexcept
    : cancel_on_disconnect(cancel_on_disconnect_) {}

// ---- intake: the agent's thread → the seat's strand ----------------------------------------

// Rows queue in order (semantic, bounded by the turn budget); previews go through a relay
// policy queue, so a fast agent and a busy strand cost at most its budget. A row supersedes
// the previews queued before it (the row carries their content), so those are discarded
// rather than delivered after it.
struct Seat::Intake {
    std::mutex mu;
    std::deque<json::object> rows;
    RelayQueue previews;
    std::optional<runtime::TurnEnd> end;
    bool scheduled{false};
};

class Seat::Sink final : public runtime::TurnSink {
public:
    Sink(std::weak_ptr<Seat> seat, std::shared_ptr<Intake> intake, strand_type strand)
        : seat_(std::move(seat)), intake_(std::move(intake)), strand_(std::move(strand)) {}

    void on_row(json::object row) override {
        std::lock_guard lock(intake_->mu);
        intake_->previews.discard_all(/*report=*/false);
        intake_->rows.push_back(std::move(row));
        schedule();
    }

    void on_preview(StreamEvent preview) override {
        std::lock_guard lock(intake_->mu);
        intake_->previews.push(std::move(preview));
        schedule();
    }

    void on_end(runtime::TurnEnd end) override {
        std::lock_guard lock(intake_->mu);
        intake_->end = std::move(end);
        schedule();
    }

private:
    // Called with the intake lock held: at most one drain is queued on the strand at a time.
    void schedule() {
        if (intake_->scheduled) {
            return;
        }
        intake_->scheduled = true;
        net::post(strand_, [weak = seat_] {
            if (auto seat = weak.lock()) {
                seat->drain_intake();
            }
        });
    }

    std::weak_ptr<Seat> seat_;
    std::shared_ptr<Intake> intake_;
    strand_type strand_;
};

// ---- lifecycle -----------------------------------------------------------------------------

Seat::Seat(net::io_context& io, SeatSpec spec, SeatOptions opt)
    : strand_(net::make_strand(io))
    , spec_(std::move(spec))
    , opt_(std::move(opt))
    , window_(opt_.budget)
    , intake_(std::make_shared<Intake>())
    , sync_timer_(strand_) {}

Seat::~Seat() = default;

boost::system::result<std::shared_ptr<Seat>> Seat::open(
    net::io_context& io, SeatSpec spec, SeatOptions opt) {
    std::error_code fec;
    std::filesystem::create_directories(opt.dir, fec);
    if (fec) {
        return make_error_code(errc::io_error);
    }
    if (spec.id.empty()) {
        spec.id = new_id("s");
    }
    if (spec.epoch.empty()) {
        spec.epoch = new_id("e");
    }
    std::shared_ptr<Seat> seat(new Seat(io, std::move(spec), std::move(opt)));
    auto tr = Transcript::open(seat->opt_.dir / "transcript.jsonl");
    if (!tr) {
        return tr.error();
    }
    seat->transcript_ = std::make_unique<Transcript>(std::move(*tr));
    auto win = seat->transcript_->load_window(seat->opt_.budget);
    if (!win) {
        return win.error();
    }
    seat->window_ = std::move(*win);
    std::vector<json::object> history;
    history.reserve(seat->window_.size());
    for (auto pos = seat->window_.first(); pos < seat->window_.end(); ++pos) {
        history.push_back(seat->window_.at(pos)->row());
    }
    if (seat->window_.end() > 0) {
        // A restored seat was last active when its transcript was last written.
        std::error_code tec;
        const auto written = std::filesystem::last_write_time(seat->opt_.dir / "transcript.jsonl", tec);
        if (!tec) {
            seat->last_activity_ = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
                std::chrono::file_clock::to_sys(written));
        }
    }
    seat->agent_ = seat->opt_.make_agent(seat->spec_, std::move(history));
    seat->save_meta();
    seat->update_summary();
    return seat;
}

void Seat::save_meta() {
    json::object meta;
    meta["id"] = spec_.id;
    meta["name"] = spec_.name;
    meta["agent"] = spec_.agent;
    meta["model"] = spec_.model;
    meta["system"] = spec_.system;
    meta["epoch"] = spec_.epoch;
    meta["turns"] = spec_.turns;
    const auto tmp = opt_.dir / "meta.json.tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << json::serialize(meta) << '\n';
    }
    std::error_code ec;
    std::filesystem::rename(tmp, opt_.dir / "meta.json", ec);
}

void Seat::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    queue_.clear();
    if (turn_cancel_) {
        turn_cancel_->cancel();
    }
    sync_timer_.cancel();
    if (transcript_) {
        (void)transcript_->sync();
    }
    wake_all();
    update_summary();
}

// ---- turns ---------------------------------------------------------------------------------

boost::system::result<Submitted> Seat::submit(std::string text) {
    if (closed_) {
        return make_error_code(errc::conflict);
    }
    if (text.empty()) {
        return make_error_code(errc::bad_request);
    }
    const bool busy = turn_cancel_.has_value();
    if (busy && queue_.size() >= opt_.max_queued_prompts) {
        return make_error_code(errc::overloaded);
    }
    ++spec_.turns;
    save_meta();
    queue_.push_back(std::move(text));
    if (!busy) {
        start_next_turn();
    }
    update_summary();
    return Submitted{spec_.turns, busy};
}

void Seat::start_next_turn() {
    if (closed_ || turn_cancel_ || queue_.empty()) {
        return;
    }
    std::string text = std::move(queue_.front());
    queue_.pop_front();
    running_turn_ = spec_.turns - queue_.size();
    json::object message;
    message["role"] = "user";
    message["content"] = text;
    json::object row;
    row["type"] = "user";
    row["message"] = std::move(message);
    row["uuid"] = new_id("u");
    row["timestamp"] = iso_now();
    row["session_id"] = spec_.id;
    push_control(wire::turn_json(running_turn_, "started"));
    publish_row(std::move(row));
    turn_cancel_.emplace();
    connected_cache_.reset(); // its "state" changed
    auto sink = std::make_shared<Sink>(weak_from_this(), intake_, strand_);
    agent_->start_turn(std::move(text), *turn_cancel_, std::move(sink));
    schedule_sync();
    wake_all();
    update_summary();
}

bool Seat::cancel() {
    if (!turn_cancel_) {
        return false;
    }
    turn_cancel_->cancel();
    return true;
}

void Seat::drain_intake() {
    std::deque<json::object> rows;
    std::vector<StreamEvent> previews;
    std::optional<runtime::TurnEnd> end;
    {
        std::lock_guard lock(intake_->mu);
        intake_->scheduled = false;
        rows.swap(intake_->rows);
        while (auto ev = intake_->previews.pop()) {
            previews.push_back(std::move(*ev));
        }
        end = std::exchange(intake_->end, std::nullopt);
    }
    for (auto& row : rows) {
        publish_row(std::move(row));
    }
    for (const auto& ev : previews) {
        publish_preview(ev);
    }
    if (end) {
        finish_turn(std::move(*end));
    }
    if (!rows.empty() || !previews.empty()) {
        wake_all();
        update_summary();
    }
}

void Seat::finish_turn(runtime::TurnEnd end) {
    const char* state = "ended";
    if (end.state == runtime::TurnEnd::State::cancelled) {
        state = "cancelled";
    } else if (end.state == runtime::TurnEnd::State::failed) {
        state = "failed";
    }
    push_control(wire::turn_json(running_turn_, state, end.error));
    turn_cancel_.reset();
    connected_cache_.reset(); // its "state" changed
    if (transcript_) {
        (void)transcript_->sync(); // turn end: durable
    }
    dirty_ = false;
    wake_all();
    start_next_turn();
    update_summary();
}

void Seat::schedule_sync() {
    if (sync_armed_ || closed_) {
        return;
    }
    sync_armed_ = true;
    sync_timer_.expires_after(opt_.sync_interval);
    sync_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        auto self = weak.lock();
        if (!self) {
            return;
        }
        self->sync_armed_ = false;
        if (ec) {
            return;
        }
        if (self->dirty_ && self->transcript_) {
            (void)self->transcript_->sync();
            self->dirty_ = false;
        }
        if (self->turn_cancel_) {
            self->schedule_sync();
        }
    });
}

// ---- publishing ----------------------------------------------------------------------------

void Seat::publish_row(json::object row) {
    FramePtr frame = Frame::from_row(std::move(row));
    if (!frame->is_frame()) {
        return;
    }
    if (transcript_) {
        if (auto r = transcript_->append(*frame); !r) {
            // The frame is still served; the failure is visible in the log and the summary.
            spdlog::error("seat {}: transcript append failed: {}", spec_.id, r.error().message());
        }
        dirty_ = true;
    }
    window_.append(frame);
    last_activity_ = std::chrono::system_clock::now();
    // Previews queued before this frame are superseded by it.
    for (const auto& sub : subscribers_) {
        sub->previews.discard_all(/*report=*/false);
    }
    // Callers wake the subscribers and refresh the summary once per batch, not per frame.
}

void Seat::publish_preview(const StreamEvent& ev) {
    for (const auto& sub : subscribers_) {
        sub->previews.push(ev);
    }
}

void Seat::push_control(std::string data) {
    const auto tag = window_.end();
    for (const auto& sub : subscribers_) {
        if (sub->control.size() >= SUBSCRIBER_CONTROL_CAP) {
            sub->need_connected = true; // too far behind: resync carries the state
            sub->control.clear();
            continue;
        }
        sub->control.emplace_back(tag, data);
    }
}

void Seat::wake_all() {
    for (const auto& sub : subscribers_) {
        if (sub->wake) {
            sub->wake();
        }
    }
}

// ---- subscribers ---------------------------------------------------------------------------

void Seat::attach(const std::shared_ptr<Subscriber>& sub, std::optional<std::string> last) {
    sub->need_connected = true;
    if (last) {
        if (auto id = parse_event_id(*last); id && id->first == spec_.epoch) {
            const std::int64_t seq = id->second;
            const auto first = static_cast<std::int64_t>(window_.first());
            const auto end = static_cast<std::int64_t>(window_.end());
            if (seq + 1 >= first && seq < end) {
                sub->cursor = static_cast<std::uint64_t>(seq + 1);
                sub->need_connected = false;
                sub->need_resumed = true;
            }
        }
    }
    subscribers_.push_back(sub);
    update_summary();
}

void Seat::detach(const std::shared_ptr<Subscriber>& sub) {
    std::erase(subscribers_, sub);
    preview_dropped_ += sub->gap_bytes + sub->previews.take_unreported_dropped();
    resyncs_ += sub->resyncs;
    if (sub->cancel_on_disconnect && turn_cancel_) {
        cancel(); // this subscriber was the turn's caller: nobody waits for the turn any more
    }
    update_summary();
}

std::shared_ptr<const std::string> Seat::connected_data() {
    if (connected_cache_ && connected_cache_end_ == window_.end() && connected_cache_first_ == window_.first()) {
        return connected_cache_;
    }
    const auto maybe = window_.page(std::nullopt, SUBSCRIBE_TURNS);
    const auto end = window_.end();
    const wire::SeatHead head{
        spec_.id,
        spec_.epoch,
        static_cast<std::int64_t>(end) - 1,
        turn_cancel_.has_value(),
        turn_cancel_ ? running_turn_ : spec_.turns};
    std::string s = wire::connected_json(head, maybe.value_or(Page{}), end);
    connected_cache_ = std::make_shared<const std::string>(std::move(s));
    connected_cache_end_ = end;
    connected_cache_first_ = window_.first();
    return connected_cache_;
}

void Seat::collect(Subscriber& sub, std::vector<OutEvent>& out) {
    if (!sub.need_connected && sub.cursor < window_.first()) {
        sub.need_connected = true; // fell behind the window front: resync
        ++sub.resyncs;
    }
    const std::string epoch_prefix = spec_.epoch + ":";
    if (sub.need_connected) {
        OutEvent ev;
        ev.kind = OutEvent::Kind::connected;
        ev.id = epoch_prefix + std::to_string(static_cast<std::int64_t>(window_.end()) - 1);
        ev.shared = connected_data();
        out.push_back(std::move(ev));
        sub.cursor = window_.end();
        sub.need_connected = false;
        sub.need_resumed = false;
        sub.control.clear();
        return;
    }
    if (sub.need_resumed) {
        OutEvent ev;
        ev.kind = OutEvent::Kind::resumed;
        ev.data = wire::resumed_json(wire::SeatHead{
            spec_.id,
            spec_.epoch,
            static_cast<std::int64_t>(sub.cursor) - 1,
            turn_cancel_.has_value(),
            spec_.turns});
        out.push_back(std::move(ev));
        sub.need_resumed = false;
    }
    std::size_t frames = 0;
    while (frames < SUBSCRIBER_BATCH_FRAMES) {
        if (!sub.control.empty() && sub.cursor >= sub.control.front().first) {
            OutEvent ev;
            ev.kind = OutEvent::Kind::turn;
            ev.data = std::move(sub.control.front().second);
            sub.control.pop_front();
            out.push_back(std::move(ev));
            continue;
        }
        if (sub.cursor < window_.end()) {
            OutEvent ev;
            ev.kind = OutEvent::Kind::frame;
            ev.seq = sub.cursor;
            ev.id = epoch_prefix + std::to_string(sub.cursor);
            ev.frame = window_.at(sub.cursor);
            out.push_back(std::move(ev));
            ++sub.cursor;
            ++sub.frames_sent;
            ++frames;
            continue;
        }
        break;
    }
    if (sub.cursor < window_.end() || !sub.control.empty()) {
        return; // previews only once the frames are out
    }
    if (const auto dropped = sub.previews.take_unreported_dropped(); dropped > 0) {
        OutEvent ev;
        ev.kind = OutEvent::Kind::gap;
        ev.data = wire::gap_json(dropped);
        sub.gap_bytes += dropped;
        out.push_back(std::move(ev));
    }
    for (std::size_t i = 0; i < SUBSCRIBER_BATCH_FRAMES; ++i) {
        auto p = sub.previews.pop();
        if (!p) {
            break;
        }
        OutEvent ev;
        ev.kind = OutEvent::Kind::preview;
        ev.data = wire::preview_json(*p);
        out.push_back(std::move(ev));
    }
}

// ---- history and summary -------------------------------------------------------------------

boost::system::result<HistoryPage> Seat::history(
    std::optional<std::uint64_t> before, std::size_t turns) {
    turns = std::clamp<std::size_t>(turns, 1, SUBSCRIBE_TURNS);
    const std::uint64_t at = before.value_or(window_.end());
    if (at > window_.end()) {
        return make_error_code(errc::bad_request);
    }
    if (auto page = window_.page(at, turns)) {
        return HistoryPage{wire::page_json(*page)};
    }
    auto page = transcript_->page(at, turns);
    if (!page) {
        return page.error();
    }
    return HistoryPage{wire::page_json(*page)};
}

void Seat::update_summary() {
    SeatSummary s;
    s.id = spec_.id;
    s.name = spec_.name;
    s.agent = spec_.agent;
    s.epoch = spec_.epoch;
    s.state = turn_cancel_ ? (queue_.empty() ? SeatState::running : SeatState::queued) : SeatState::idle;
    s.turns = spec_.turns;
    s.frames = window_.end();
    s.window_first = window_.first();
    s.window_frames = window_.size();
    s.window_bytes = window_.bytes();
    std::uint64_t dropped = preview_dropped_;
    std::uint64_t resyncs = resyncs_;
    for (const auto& sub : subscribers_) {
        dropped += sub->gap_bytes;
        resyncs += sub->resyncs;
    }
    s.preview_dropped_bytes = dropped;
    s.resyncs = resyncs;
    s.subscribers = subscribers_.size();
    s.queued = queue_.size();
    s.last_activity = last_activity_;
    std::lock_guard lock(summary_mu_);
    summary_ = std::move(s);
}

SeatSummary Seat::summary() const {
    std::lock_guard lock(summary_mu_);
    return summary_;
}

} // namespace sluice::hub
