// The asynchronous form of a hub or seat operation: Asio's completion-token protocol over work
// that runs on a strand (or the hub's writer) and may finish later, completing on the caller's
// executor. Header-only.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <utility>

namespace sluice::hub::detail {

/// Starts `start(done)` on `ex` and completes `token` with `done`'s one argument (an `R`), posted
/// to the handler's associated executor (`ex` when it has none), so a coroutine on another
/// strand resumes on its own. `done` is a copyable `std::function<void(R)>` and may be called
/// later, from any thread, exactly once. `start` runs on `ex`; a token's temporary captured by
/// value there is the caller's business (GCC 12: pass named objects to a `co_await`).
template <class R, class Executor, class Start, class Token>
auto async_run(const Executor& ex, Start start, Token&& token) {
    auto initiate = [ex](auto handler, Start st) {
        auto out = boost::asio::get_associated_executor(handler, ex);
        // Shared: `done` is a std::function (copyable) while a handler may be move-only.
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        boost::asio::post(ex, [h, out, st = std::move(st)]() mutable {
            std::function<void(R)> done = [h, out](R r) {
                boost::asio::post(
                    out, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
            };
            st(std::move(done));
        });
    };
    return boost::asio::async_initiate<Token, void(R)>(
        std::move(initiate), token, std::move(start));
}

/// As `async_run`, for a hub call of the shape `call(out, done)` that hands `done` its `R` on
/// the executor `out` itself: started at once, on the calling thread.
template <class R, class Call, class Token>
auto async_call(Call call, Token&& token) {
    auto initiate = [](auto handler, Call c) {
        auto out = boost::asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        c(out, [h](R r) { std::move (*h)(std::move(r)); });
    };
    return boost::asio::async_initiate<Token, void(R)>(std::move(initiate), token, std::move(call));
}

} // namespace sluice::hub::detail
