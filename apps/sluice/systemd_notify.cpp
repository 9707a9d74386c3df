// serve under systemd: socket activation and sd_notify (systemd_notify.hpp).
#include "systemd_notify.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace sluice::app {

namespace {

// `host:port` of the address `fd` is bound to (IPv6 in brackets); "" when it cannot be read.
std::string bound_address(int fd) {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        return {};
    }
    std::array<char, INET6_ADDRSTRLEN> buf{};
    if (sa.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&sa);
        ::inet_ntop(AF_INET, &a->sin_addr, buf.data(), buf.size());
        return std::string(buf.data()) + ":" + std::to_string(ntohs(a->sin_port));
    }
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&sa);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf.data(), buf.size());
    return "[" + std::string(buf.data()) + "]:" + std::to_string(ntohs(a->sin6_port));
}

} // namespace

std::optional<ActivatedListener> activated_listener(std::string& why) {
    const int n = ::sd_listen_fds(1);
    if (n < 0) {
        why = std::string("socket activation: ") + std::strerror(-n);
        return std::nullopt;
    }
    if (n == 0) {
        return ActivatedListener{};
    }
    if (n > 1) {
        why = "socket activation passed " + std::to_string(n)
              + " sockets; sluice serves one (one ListenStream= in sluice.socket)";
        return std::nullopt;
    }
    const int fd = SD_LISTEN_FDS_START;
    if (::sd_is_socket_inet(fd, 0, SOCK_STREAM, 1, 0) <= 0) {
        why = "socket activation passed a socket that is not a listening TCP socket "
              "(sluice.socket needs ListenStream=ADDRESS:PORT)";
        return std::nullopt;
    }
    return ActivatedListener{fd, bound_address(fd)};
}

SystemdNotifier::SystemdNotifier(boost::asio::io_context& io)
    : timer_(boost::asio::make_strand(io)) {
    std::uint64_t usec = 0;
    if (::sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
        watchdog_ = std::chrono::microseconds(static_cast<std::int64_t>(usec));
    }
}

void SystemdNotifier::ready(std::string status) {
    boost::asio::post(timer_.get_executor(), [this, status = std::move(status)] {
        if (stopping_) {
            return;
        }
        const std::string msg = "READY=1\nSTATUS=" + status;
        if (const int r = ::sd_notify(0, msg.c_str()); r < 0) {
            spdlog::warn("sd_notify READY=1 failed: {}", std::strerror(-r));
        }
        if (watchdog_) {
            ping();
        }
    });
}

void SystemdNotifier::ping() {
    (void)::sd_notify(0, "WATCHDOG=1"); // a lost ping is a restart systemd decides on
    // A third of the interval: two pings may be late before systemd gives up on the hub.
    timer_.expires_after(*watchdog_ / 3);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec && !stopping_) {
            ping();
        }
    });
}

void SystemdNotifier::stopping() {
    stopping_ = true;
    (void)::sd_notify(0, "STOPPING=1");
    boost::asio::post(timer_.get_executor(), [this] { timer_.cancel(); });
}

} // namespace sluice::app
