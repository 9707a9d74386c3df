// Forwarder: commands for a seat another node owns, carried to its owner and answered by it.
#pragma once

#include <functional>
#include <string>

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

} // namespace sluice::hub
