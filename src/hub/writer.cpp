// Writer: the hub's bounded disk worker — blocking file work off the I/O threads.
#include <sluice/detail/net.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace sluice::hub {

struct Writer::State {
    explicit State(std::size_t cap)
        : capacity(cap) {}

    net::thread_pool pool{1}; // ONE thread: jobs run in submission order
    std::size_t capacity;
    std::atomic<std::size_t> held{0};
    std::mutex mu;
    std::condition_variable idle;
};

Writer::Writer(std::size_t capacity)
    : state_(std::make_shared<State>(capacity)) {
}

Writer::~Writer() {
    state_->pool.join(); // runs what was submitted, then stops the thread
}

bool Writer::submit(Job job, net::any_io_executor ex, Done done) {
    auto& st = *state_;
    std::size_t held = st.held.load(std::memory_order_relaxed);
    do {
        if (held >= st.capacity) {
            return false;
        }
    } while (!st.held.compare_exchange_weak(held, held + 1, std::memory_order_acq_rel));
    net::post(
        st.pool,
        [state = state_,
         job = std::move(job),
         ex = std::move(ex),
         done = std::move(done)]() mutable {
            boost::system::error_code ec;
            try {
                ec = job();
            } catch (const std::exception& e) {
                spdlog::error(
                    "writer: a job threw: {}", e.what()); // a bug; the caller sees io_error
                ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            }
            if (done) {
                net::post(ex, [done = std::move(done), ec] { done(ec); });
            }
            {
                std::lock_guard lock(state->mu);
                state->held.fetch_sub(1, std::memory_order_acq_rel);
            }
            state->idle.notify_all();
        });
    return true;
}

std::size_t Writer::pending() const noexcept {
    return state_->held.load(std::memory_order_acquire);
}

void Writer::drain() {
    std::unique_lock lock(state_->mu);
    state_->idle.wait(lock, [&] { return state_->held.load(std::memory_order_acquire) == 0; });
}

} // namespace sluice::hub
