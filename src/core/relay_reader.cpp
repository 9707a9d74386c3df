// RelayReader: the fast path over try_next, and async_next when it must wait or yield.
#include <sluice/core/relay_async.hpp>
#include <sluice/core/relay_reader.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace sluice {

boost::asio::awaitable<std::optional<StreamEvent>> RelayReader::next() {
    error_ = {};
    if (taken_ < RELAY_CHANNEL_CAPACITY) {
        if (auto ev = rx_.try_next()) {
            ++taken_;
            co_return ev;
        }
    }
    // Nothing waiting, or a batch handed over in a row: a posted completion, so the thread's
    // other handlers run before the next batch.
    taken_ = 0;
    const auto ex = co_await boost::asio::this_coro::executor;
    auto [ec, ev] = co_await async_next(rx_, ex, boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec) {
        error_ = ec;
        co_return std::nullopt;
    }
    co_return std::move(ev);
}

} // namespace sluice
