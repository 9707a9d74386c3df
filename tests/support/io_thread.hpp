// IoThread: an io_context served by one background thread, for tests whose caller blocks.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>

namespace sluice::test {

/// One io_context run by one thread from construction until destruction. For tests that read
/// a relay with its blocking `next()` (a library caller on a plain thread) while the work runs
/// on the io_context. The destructor lets the remaining work finish, then joins.
///
/// @par Thread safety
/// `executor()` from any thread.
class IoThread {
public:
    IoThread()
        : work_(boost::asio::make_work_guard(io_))
        , thread_([this] { io_.run(); }) {}

    ~IoThread() {
        work_.reset();
        thread_.join();
    }

    IoThread(const IoThread&) = delete;
    IoThread& operator=(const IoThread&) = delete;

    /// The io_context's executor.
    [[nodiscard]] boost::asio::any_io_executor executor() { return io_.get_executor(); }

    /// The thread's id (to tell whether code ran on it).
    [[nodiscard]] std::thread::id id() const noexcept { return thread_.get_id(); }

private:
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::thread thread_;
};

} // namespace sluice::test
