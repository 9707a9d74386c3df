// The listening side of the server: the acceptor and its TLS context, the refused connections
// being answered, and the descriptor held back for the moment the process runs out.
#pragma once

#include "message.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

namespace sluice::server {

/// Refusals answered at once (each holds its socket up to the refusal read timeout); past this
/// a refused connection is written 503 without reading and closed.
inline constexpr std::size_t REFUSALS_IN_FLIGHT = 16;

/// The acceptor and what the accept loop keeps beside it.
///
/// @par Thread safety
/// `stop`, `stopping`, `tls` and the refusal count are safe from any thread (`tls` once `start`
/// has set it); the acceptor and the reserve descriptor are confined to the acceptor's strand
/// once the loop runs.
class Listener {
public:
    /// An acceptor on a strand of its own.
    explicit Listener(net::io_context& io);
    ~Listener();
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    /// The acceptor (its strand is its executor).
    [[nodiscard]] tcp::acceptor& acceptor() noexcept { return acceptor_; }

    /// The TLS context connections are served with, or null (plain HTTP).
    [[nodiscard]] net::ssl::context* tls() const noexcept { return tls_.get(); }

    /// Sets the TLS context (before the accept loop starts).
    void set_tls(std::unique_ptr<net::ssl::context> ctx) noexcept { tls_ = std::move(ctx); }

    /// Marks the listener as stopping. @return whether it already was.
    bool stop() noexcept { return stopping_.exchange(true); }

    /// Whether `stop` was called.
    [[nodiscard]] bool stopping() const noexcept { return stopping_.load(); }

    /// Takes a place among the refusals answered at once. @return false when
    /// REFUSALS_IN_FLIGHT are being answered (then nothing was taken).
    bool enter_refusal() noexcept;

    /// Gives back a place `enter_refusal` took.
    void leave_refusal() noexcept { refusing_.fetch_sub(1); }

    /// Holds a descriptor back (of /dev/null), if none is held. Acceptor strand.
    void hold_reserve() noexcept;

    /// Gives the held descriptor back to the process. @return whether one was held.
    bool drop_reserve() noexcept;

    /// Whether a warning about running out of descriptors is due: at most one a second.
    /// Acceptor strand.
    bool fd_log_due(std::chrono::steady_clock::time_point now) noexcept;

private:
    tcp::acceptor acceptor_;
    std::unique_ptr<net::ssl::context> tls_; // set by start with --tls-cert/--tls-key
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> refusing_{0};              // refused connections being answered
    int reserve_fd_{-1};                                // held back for answering when out
    std::chrono::steady_clock::time_point last_fd_log_; // the last warning
};

} // namespace sluice::server
