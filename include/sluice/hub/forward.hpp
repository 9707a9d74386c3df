// Forwarder: commands for a seat another node owns, carried to its owner and answered by it.
#pragma once

#include <sluice/hub/async.hpp>

#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace sluice::hub {

/// A plain API request, as the node that received it was asked (already authorised there).
struct ForwardedRequest {
    std::string method; ///< "POST", "DELETE", "PATCH"
    std::string target; ///< the request target ("/v1/seats/<id>/messages")
    std::string body;   ///< the request body (JSON)
};

/// The owner's answer: its HTTP status and body. Status 0: no answer (the owner is gone or
/// did not answer in time); `body` then says why.
using ForwardDone = std::function<void(unsigned status, std::string body)>;

/// Carries commands between nodes (scale-out). Without one, a mirror's commands are refused.
///
/// @par Thread safety
/// Safe from any thread; `done` runs on an arbitrary thread (post to your own executor).
class Forwarder {
public:
    virtual ~Forwarder() = default;

    /// Sends `req` to node `owner` and calls `done` with its answer (or status 0 and why).
    virtual void forward(const std::string& owner, ForwardedRequest req, ForwardDone done) = 0;
};

/// What `async_forward` completes with: the owner's status (0: no answer) and body.
struct ForwardAnswer {
    unsigned status{};
    std::string body;
};

/// `Forwarder::forward` as an Asio completion-token operation: void(ForwardAnswer), on the
/// caller's executor (a route `co_await`s it; under GCC 12, a named operation).
template <class Token>
auto async_forward(
    std::shared_ptr<Forwarder> forwarder, std::string owner, ForwardedRequest req, Token&& token) {
    return detail::async_call<ForwardAnswer>(
        [fwd = std::move(forwarder), owner = std::move(owner), req = std::move(req)](
            const auto& ex, auto done) mutable {
            fwd->forward(
                owner,
                std::move(req),
                [ex, done = std::move(done)](unsigned status, std::string body) {
                    boost::asio::post(
                        ex, [done, answer = ForwardAnswer{status, std::move(body)}]() mutable {
                            done(std::move(answer));
                        });
                });
        },
        std::forward<Token>(token));
}

} // namespace sluice::hub
