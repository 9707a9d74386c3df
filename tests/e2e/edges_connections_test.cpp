// End-to-end tests of the hub's connection edges: every keep-alive request has the header
// timeout, and out of descriptors the hub answers /healthz, refuses clients and does not spin —
// the real binary, real sockets.
#include "support/hub_process.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`) both resolve.
namespace sluice::test {
namespace {

using namespace std::chrono_literals;

// Reads from `sock` until the peer closes it or `limit` passes; returns how long it took.
std::chrono::milliseconds time_to_close(tcp::socket& sock, std::chrono::milliseconds limit) {
    const auto start = std::chrono::steady_clock::now();
    ::timeval tv{static_cast<time_t>(limit.count() / 1000), 0};
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::array<char, 4096> b{};
    boost::system::error_code ec;
    while (!ec) {
        sock.read_some(net::buffer(b), ec);
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
}

TEST(HubEdges, EveryKeepAliveRequestHasTheHeaderTimeout) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--header-timeout-ms", "500"}));
    net::io_context io;
    tcp::socket sock(io);
    sock.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
    net::write(sock, net::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")));
    std::string got;
    net::read_until(sock, net::dynamic_buffer(got), "\r\n\r\nok"); // /healthz answers "ok"
    ASSERT_NE(got.find("200 OK"), std::string::npos);
    // The second request on the connection starts, then stalls inside its headers.
    net::write(sock, net::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: 12")));
    const auto took = time_to_close(sock, 20s);
    EXPECT_LT(took, 5s) << "the second request's headers were given the idle timeout";
}

// CPU seconds `pid` used so far (utime + stime).
double cpu_seconds(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(all.substr(all.rfind(')') + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i) {
        if (i == 14 || i == 15) {
            ticks += std::stod(f);
        }
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

TEST(HubEdges, OutOfDescriptorsTheHubAnswersHealthRefusesClientsAndDoesNotSpin) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir), true, 128U);
    for (int i = 0; i < 24; ++i) {
        (void)new_seat(hub); // each holds descriptors: the gate alone cannot keep the limit
    }
    net::io_context io;
    std::vector<std::unique_ptr<tcp::socket>> idle;
    for (int i = 0; i < 200; ++i) {
        auto s = std::make_unique<tcp::socket>(io);
        boost::system::error_code ec;
        s->connect(
            {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())}, ec);
        if (!ec) {
            idle.push_back(std::move(s));
        }
    }
    std::this_thread::sleep_for(500ms);
    const double before = cpu_seconds(hub.pid());
    std::this_thread::sleep_for(2s);
    const double used = cpu_seconds(hub.pid()) - before;
    EXPECT_LT(used, 0.5) << "the hub spun while out of descriptors";

    const auto health = http("GET", hub.base() + "/healthz");
    EXPECT_EQ(health.status, 200U) << health.body;
    const auto refused = http("GET", hub.base() + "/v1/seats");
    EXPECT_EQ(refused.status, 503U) << refused.body;
    idle.clear();
    // Once the idle connections go, the hub serves again.
    Reply again;
    for (int i = 0; i < 50; ++i) {
        again = http("GET", hub.base() + "/v1/seats");
        if (again.status == 200) {
            break;
        }
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(again.status, 200U);
    EXPECT_NE(hub.output().find("listening"), std::string::npos);
}

} // namespace
} // namespace sluice::test
