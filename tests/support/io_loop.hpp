// IoLoop: a single-threaded io_context the test thread drives until a condition holds.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

namespace sluice::test {

/// A single-threaded io_context run by the test thread: deterministic, no other thread.
class IoLoop {
public:
    IoLoop() = default;

    /// Runs what is left (an agent's process ending, its reaping) for up to 10 s.
    ~IoLoop() {
        io_.restart();
        io_.run_for(std::chrono::seconds(10));
    }

    IoLoop(const IoLoop&) = delete;
    IoLoop& operator=(const IoLoop&) = delete;
    IoLoop(IoLoop&&) = delete;
    IoLoop& operator=(IoLoop&&) = delete;

    /// Runs handlers until `done()` holds; false if it still does not after `timeout`.
    bool until(
        const std::function<bool()>& done,
        std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            if (io_.stopped()) {
                io_.restart();
            }
            if (io_.run_one_for(std::chrono::milliseconds(10)) == 0) {
                // No work at all: whatever we wait for comes from another thread.
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        return true;
    }

    /// Runs `aw` to completion on this loop and returns its result.
    template <class T>
    T run(boost::asio::awaitable<T> aw) {
        auto fut = boost::asio::co_spawn(io_, std::move(aw), boost::asio::use_future);
        until(
            [&] { return fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
            std::chrono::minutes(5));
        return fut.get();
    }

    /// Runs every handler that is ready or becomes ready, until no work is left.
    void drain() {
        io_.restart();
        io_.run();
    }

    boost::asio::io_context& context() noexcept { return io_; }

    boost::asio::io_context::executor_type executor() noexcept { return io_.get_executor(); }

private:
    boost::asio::io_context io_;
};

} // namespace sluice::test
