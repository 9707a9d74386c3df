// serve under systemd: the socket a socket unit passed, and the service manager told when the
// hub is ready, alive (the watchdog) and stopping. Without systemd none of it does anything.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

namespace sluice::app {

/// A listening socket systemd passed.
struct ActivatedListener {
    int fd{-1};          ///< -1: none was passed
    std::string address; ///< what it is bound to, as `--listen` spells it ("127.0.0.1:8420")
};

/// The listening TCP socket socket activation passed (sd_listen_fds; LISTEN_* are unset so
/// agents do not see them), `fd` -1 when none was; nullopt with `why` set when what was passed
/// is not one listening TCP socket.
std::optional<ActivatedListener> activated_listener(std::string& why);

/// Tells the service manager about this hub (sd_notify; nothing when NOTIFY_SOCKET is unset).
///
/// @par Thread safety
/// `ready` and `stopping` from any thread; the pings run on a strand of their own. Outlives
/// the io_context's run.
class SystemdNotifier {
public:
    /// A notifier; the watchdog interval is read from WATCHDOG_USEC/WATCHDOG_PID
    /// (sd_watchdog_enabled).
    explicit SystemdNotifier(boost::asio::io_context& io);

    /// Posts READY=1 (with `status`) to `io`: sent once `io` runs, i.e. once the listener,
    /// started before, accepts. Then pings the watchdog every third of its interval, from `io`,
    /// so a stuck event loop stops the pings and systemd restarts the hub.
    void ready(std::string status);

    /// Sends STOPPING=1 and stops the pings.
    void stopping();

    /// The watchdog interval, when the service manager asked for pings.
    [[nodiscard]] std::optional<std::chrono::microseconds> watchdog() const noexcept {
        return watchdog_;
    }

private:
    void ping();

    boost::asio::steady_timer timer_; ///< on a strand: the pings
    std::optional<std::chrono::microseconds> watchdog_;
    std::atomic<bool> stopping_{false};
};

} // namespace sluice::app
