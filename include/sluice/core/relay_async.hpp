// async_next: the Asio form of RelayReceiver::next, for coroutine and callback callers.
#pragma once
// Header-only by design: a template over the completion token, on RelayReceiver::park/unpark.

#include <sluice/core/relay.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <memory>
#include <optional>
#include <utility>

namespace sluice {

namespace detail {

// One asynchronous receive: parks a waiter in the relay and resumes on the handler's executor.
// Completion is always posted, never run inside the initiating call.
template <class Handler, class Executor>
class RelayNextOp : public std::enable_shared_from_this<RelayNextOp<Handler, Executor>> {
public:
    RelayNextOp(RelayReceiver& rx, Handler h, Executor ex)
        : rx_(rx)
        , handler_(std::move(h))
        , work_(std::move(ex)) {}

    void start() {
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) {
            std::weak_ptr<RelayNextOp> weak = this->shared_from_this();
            slot.assign([weak](boost::asio::cancellation_type) {
                if (auto op = weak.lock()) {
                    op->cancel();
                }
            });
        }
        attempt(/*initiating=*/true);
    }

private:
    struct Wake : RelayWaiter {
        explicit Wake(std::shared_ptr<RelayNextOp> op)
            : op_(std::move(op)) {}

        // Called with the relay's lock released, from the producer's thread.
        void ready() override {
            auto op = std::move(op_);
            boost::asio::post(op->work_.get_executor(), [op] { op->attempt(false); });
        }

        std::shared_ptr<RelayNextOp> op_;
    };

    void attempt(bool initiating) {
        std::optional<StreamEvent> ev = rx_.try_next();
        if (!ev && !rx_.ended()) {
            // Not ready: park. `park` hands the waiter back if readiness raced in.
            if (rx_.park(std::make_unique<Wake>(this->shared_from_this())) == nullptr) {
                return;
            }
            ev = rx_.try_next();
            if (!ev && !rx_.ended()) {
                auto self = this->shared_from_this();
                boost::asio::post(work_.get_executor(), [self] { self->attempt(false); });
                return;
            }
        }
        if (initiating) {
            auto self = this->shared_from_this();
            boost::asio::post(work_.get_executor(), [self, e = std::move(ev)]() mutable {
                self->finish({}, std::move(e));
            });
            return;
        }
        finish({}, std::move(ev));
    }

    void cancel() {
        if (rx_.unpark() != nullptr) {
            auto self = this->shared_from_this();
            boost::asio::post(work_.get_executor(), [self] {
                self->finish(boost::asio::error::operation_aborted, std::nullopt);
            });
        }
    }

    void finish(boost::system::error_code ec, std::optional<StreamEvent> ev) {
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) {
            slot.clear();
        }
        auto h = std::move(handler_);
        auto work = std::move(work_);
        std::move(h)(ec, std::move(ev));
    }

    RelayReceiver& rx_;
    Handler handler_;
    boost::asio::executor_work_guard<Executor> work_;
};

} // namespace detail

/// Receives the next event asynchronously.
///
/// Completion signature `void(boost::system::error_code, std::optional<StreamEvent>)`: an event,
/// or nullopt at the relay's end; `operation_aborted` if cancelled through the handler's
/// cancellation slot (the relay is left intact and a later receive continues where this left).
/// The handler runs on its associated executor (or `ex`).
///
/// @param rx must outlive the operation; at most one receive may be outstanding on it.
/// @param ex the I/O executor used when the handler has none of its own.
template <class Executor, class CompletionToken>
auto async_next(RelayReceiver& rx, const Executor& ex, CompletionToken&& token) {
    return boost::asio::async_initiate<
        CompletionToken,
        void(boost::system::error_code, std::optional<StreamEvent>)>(
        [&rx, ex](auto handler) {
            auto hex = boost::asio::get_associated_executor(handler, ex);
            using Op = detail::RelayNextOp<decltype(handler), decltype(hex)>;
            std::make_shared<Op>(rx, std::move(handler), hex)->start();
        },
        token);
}

} // namespace sluice
