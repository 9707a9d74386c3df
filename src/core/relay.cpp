// The relay: RelayQueue behind a mutex, with a blocking and a parked (async) receive.
#include <sluice/core/assert.hpp>
#include <sluice/core/relay.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

namespace sluice {

namespace {

// Process-wide counters. Each is exact on its own; together they are exact at quiescence.
struct Globals {
    std::atomic<std::uint64_t> produced{0};
    std::atomic<std::uint64_t> forwarded{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::uint64_t> retained{0};
    std::atomic<std::uint64_t> peak_retained{0};
    std::atomic<std::uint64_t> active{0};
};

Globals& globals() noexcept {
    static Globals g;
    return g;
}

// Adds what one queue operation changed to the process-wide counters.
void publish(const RelayCounters& before, const RelayCounters& after) noexcept {
    auto& g = globals();
    constexpr auto RELAXED = std::memory_order_relaxed;
    if (after.produced != before.produced) {
        g.produced.fetch_add(after.produced - before.produced, RELAXED);
    }
    if (after.forwarded != before.forwarded) {
        g.forwarded.fetch_add(after.forwarded - before.forwarded, RELAXED);
    }
    if (after.dropped != before.dropped) {
        g.dropped.fetch_add(after.dropped - before.dropped, RELAXED);
    }
    if (after.retained > before.retained) {
        const auto now = g.retained.fetch_add(after.retained - before.retained, RELAXED)
                         + (after.retained - before.retained);
        auto peak = g.peak_retained.load(RELAXED);
        while (now > peak && !g.peak_retained.compare_exchange_weak(peak, now, RELAXED)) {
        }
    } else if (after.retained < before.retained) {
        g.retained.fetch_sub(before.retained - after.retained, RELAXED);
    }
}

} // namespace

RelaySnapshot stream_relay_snapshot() noexcept {
    const auto& g = globals();
    constexpr auto RELAXED = std::memory_order_relaxed;
    return RelaySnapshot{
        .produced_delta_bytes = g.produced.load(RELAXED),
        .forwarded_delta_bytes = g.forwarded.load(RELAXED),
        .dropped_delta_bytes = g.dropped.load(RELAXED),
        .retained_delta_bytes = g.retained.load(RELAXED),
        .peak_retained_delta_bytes = g.peak_retained.load(RELAXED),
        .active_relays = g.active.load(RELAXED),
    };
}

namespace detail {

// The state both ends share. Every field is guarded by `mu`.
struct RelayState {
    RelayState(CancellationToken t, RelayLimits limits)
        : queue(limits)
        , token(std::move(t)) {
        globals().active.fetch_add(1, std::memory_order_relaxed);
    }

    ~RelayState() { mark_ended(); }

    RelayState(const RelayState&) = delete;
    RelayState& operator=(const RelayState&) = delete;
    RelayState(RelayState&&) = delete;
    RelayState& operator=(RelayState&&) = delete;

    void mark_ended() noexcept {
        if (!ended) {
            ended = true;
            globals().active.fetch_sub(1, std::memory_order_relaxed);
        }
    }

    std::mutex mu;
    std::condition_variable cv;
    RelayQueue queue;
    CancellationToken token;
    std::unique_ptr<RelayWaiter> waiter;
    bool input_closed{false};
    bool caller_gone{false};
    bool consumer_blocked{false};
    bool ended{false};
};

} // namespace detail

std::pair<RelaySender, RelayReceiver>
make_stream_relay(CancellationToken turn, RelayLimits limits) {
    auto state = std::make_shared<detail::RelayState>(std::move(turn), limits);
    return {RelaySender{state}, RelayReceiver{state}};
}

// ---- sender -------------------------------------------------------------------------------

RelaySender::~RelaySender() {
    close();
}

RelaySender& RelaySender::operator=(RelaySender&& other) noexcept {
    if (this != &other) {
        close();
        state_ = std::move(other.state_);
    }
    return *this;
}

bool RelaySender::send(StreamEvent ev) {
    if (!state_) {
        return false;
    }
    auto& s = *state_;
    std::unique_ptr<detail::RelayWaiter> waiter;
    bool wake = false;
    {
        std::lock_guard lock(s.mu);
        if (s.caller_gone || s.input_closed) {
            // Nobody will read it: count a preview as produced and dropped, so totals balance.
            if (auto n = preview_bytes(ev); n && *n > 0) {
                auto& g = globals();
                g.produced.fetch_add(*n, std::memory_order_relaxed);
                g.dropped.fetch_add(*n, std::memory_order_relaxed);
            }
            return false;
        }
        const RelayCounters before = s.queue.counters();
        s.queue.push(std::move(ev));
        publish(before, s.queue.counters());
        wake = s.consumer_blocked;
        waiter = std::move(s.waiter);
    }
    if (wake) {
        s.cv.notify_one();
    }
    if (waiter) {
        waiter->ready();
    }
    return true;
}

void RelaySender::close() noexcept {
    if (!state_) {
        return;
    }
    auto& s = *state_;
    std::unique_ptr<detail::RelayWaiter> waiter;
    {
        std::lock_guard lock(s.mu);
        if (s.input_closed) {
            state_.reset();
            return;
        }
        s.input_closed = true;
        waiter = std::move(s.waiter);
    }
    s.cv.notify_all();
    if (waiter) {
        waiter->ready();
    }
    state_.reset();
}

bool RelaySender::caller_gone() const noexcept {
    if (!state_) {
        return true;
    }
    std::lock_guard lock(state_->mu);
    return state_->caller_gone;
}

// ---- receiver -----------------------------------------------------------------------------

RelayReceiver::RelayReceiver(std::shared_ptr<detail::RelayState> s) noexcept
    : state_(std::move(s))
    , ended_(false) {
}

RelayReceiver::~RelayReceiver() {
    release();
}

RelayReceiver& RelayReceiver::operator=(RelayReceiver&& other) noexcept {
    if (this != &other) {
        release();
        state_ = std::move(other.state_);
        channel_ = std::move(other.channel_);
        ended_ = std::exchange(other.ended_, true);
    }
    return *this;
}

void RelayReceiver::release() noexcept {
    if (!state_) {
        return;
    }
    auto& s = *state_;
    bool cancel = false;
    std::unique_ptr<detail::RelayWaiter> waiter;
    {
        std::lock_guard lock(s.mu);
        cancel = !s.input_closed; // a normal end never cancels
        s.caller_gone = true;
        const RelayCounters before = s.queue.counters();
        s.queue.discard_all();
        publish(before, s.queue.counters());
        waiter = std::move(s.waiter);
        s.mark_ended();
    }
    channel_.clear();
    ended_ = true;
    if (cancel) {
        s.token.cancel();
    }
    state_.reset();
    // `waiter` (an abandoned async receive) is destroyed here, outside the lock.
}

bool RelayReceiver::refill(
    std::optional<std::chrono::steady_clock::time_point> deadline, bool block) {
    if (!state_) {
        ended_ = true;
        return false;
    }
    auto& s = *state_;
    std::unique_lock lock(s.mu);
    for (;;) {
        if (!s.queue.empty()) {
            const RelayCounters before = s.queue.counters();
            for (std::size_t i = 0; i < RELAY_CHANNEL_CAPACITY; ++i) {
                auto ev = s.queue.pop();
                if (!ev) {
                    break;
                }
                channel_.push_back(std::move(*ev));
            }
            publish(before, s.queue.counters());
            return true;
        }
        if (s.input_closed) {
            ended_ = true;
            s.mark_ended();
            return false;
        }
        if (!block) {
            return false;
        }
        s.consumer_blocked = true;
        if (deadline) {
            if (s.cv.wait_until(lock, *deadline) == std::cv_status::timeout && s.queue.empty()
                && !s.input_closed) {
                s.consumer_blocked = false;
                return false;
            }
        } else {
            s.cv.wait(lock);
        }
        s.consumer_blocked = false;
    }
}

std::optional<StreamEvent> RelayReceiver::try_next() {
    if (channel_.empty() && !ended_) {
        refill(std::nullopt, false);
    }
    if (channel_.empty()) {
        return std::nullopt;
    }
    StreamEvent ev = std::move(channel_.front());
    channel_.pop_front();
    return ev;
}

std::optional<StreamEvent> RelayReceiver::next() {
    if (channel_.empty() && !ended_) {
        refill(std::nullopt, true);
    }
    return try_next();
}

std::optional<StreamEvent> RelayReceiver::next_for(std::chrono::nanoseconds timeout) {
    if (channel_.empty() && !ended_) {
        refill(std::chrono::steady_clock::now() + timeout, true);
    }
    return try_next();
}

bool RelayReceiver::ended() const noexcept {
    return ended_ && channel_.empty();
}

RelayCounters RelayReceiver::counters() const {
    if (!state_) {
        return {};
    }
    std::lock_guard lock(state_->mu);
    return state_->queue.counters();
}

std::unique_ptr<detail::RelayWaiter> RelayReceiver::park(std::unique_ptr<detail::RelayWaiter> w) {
    if (!state_ || !channel_.empty() || ended_) {
        return w;
    }
    std::lock_guard lock(state_->mu);
    if (!state_->queue.empty() || state_->input_closed) {
        return w;
    }
    SLUICE_INVARIANT(state_->waiter == nullptr, "one receive at a time on a relay");
    state_->waiter = std::move(w);
    return nullptr;
}

std::unique_ptr<detail::RelayWaiter> RelayReceiver::unpark() noexcept {
    if (!state_) {
        return nullptr;
    }
    std::lock_guard lock(state_->mu);
    return std::move(state_->waiter);
}

} // namespace sluice
