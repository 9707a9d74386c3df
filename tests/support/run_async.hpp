// run_async: runs a coroutine to completion on a single-threaded io_context and returns its value.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace sluice::test {

namespace detail {

template <class T>
struct AwaitableValue;

template <class T>
struct AwaitableValue<boost::asio::awaitable<T>> {
    using type = T;
};

} // namespace detail

/// Spawns `task` (a callable returning `awaitable<T>`, kept alive until it completes) on `io`
/// and runs `io` on this thread until the task completes; other work on `io` runs too (and may
/// be left pending). Rethrows an exception that escaped the task.
/// @throws std::logic_error if `io` ran out of work before the task completed.
template <class F>
auto run_async(boost::asio::io_context& io, F task);

/// As above, but the task runs on `ex` (an executor of `io`: a strand, say).
template <class F>
auto run_async(boost::asio::io_context& io, const boost::asio::any_io_executor& ex, F task) {
    using T = typename detail::AwaitableValue<std::invoke_result_t<F&>>::type;
    std::exception_ptr failure;
    bool done = false;
    if constexpr (std::is_void_v<T>) {
        boost::asio::co_spawn(ex, std::move(task), [&](std::exception_ptr e) {
            failure = e;
            done = true;
        });
    }
    std::optional<std::conditional_t<std::is_void_v<T>, int, T>> out;
    if constexpr (!std::is_void_v<T>) {
        boost::asio::co_spawn(ex, std::move(task), [&](std::exception_ptr e, T v) {
            failure = e;
            if (!e) {
                out.emplace(std::move(v));
            }
            done = true;
        });
    }
    io.restart();
    while (!done && io.run_one() > 0) {
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    if (!done) {
        throw std::logic_error("run_async: the io_context ran out of work before the task ended");
    }
    if constexpr (!std::is_void_v<T>) {
        return std::move(*out);
    }
}

template <class F>
auto run_async(boost::asio::io_context& io, F task) {
    return run_async(io, io.get_executor(), std::move(task));
}

} // namespace sluice::test
