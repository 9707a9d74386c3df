// Tests of the HTTP client (and of the loopback StubProvider it is tested against).
#include "support/stub_provider.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace sluice;
using namespace std::chrono_literals;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// A raw socket exchange, so the stub is checked without the client under test.
std::string raw_exchange(std::uint16_t port, const std::string& request) {
    net::io_context io;
    tcp::socket sock(io);
    sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    net::write(sock, net::buffer(request));
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    for (;;) {
        const auto n = sock.read_some(net::buffer(buf), ec);
        if (ec) {
            break;
        }
        out.append(buf, n);
    }
    return out;
}

TEST(StubProvider, ServesCannedResponsesInOrderAndRecordsRequests) {
    test::StubProvider stub;
    stub.enqueue({.body = "data: one\n\n", .chunk_size = 3});
    stub.enqueue({.status = 404, .content_type = "application/json", .body = "{}",
                  .content_length = true});
    const std::string req = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\n"
                            "Content-Length: 5\r\n\r\nhello";
    const auto first = raw_exchange(stub.port(), req);
    EXPECT_NE(first.find("HTTP/1.1 200 OK"), std::string::npos);
    EXPECT_NE(first.find("Transfer-Encoding: chunked"), std::string::npos);
    EXPECT_NE(first.find("3\r\ndat\r\n"), std::string::npos);
    EXPECT_NE(first.find("0\r\n\r\n"), std::string::npos);
    const auto second = raw_exchange(stub.port(), req);
    EXPECT_NE(second.find("HTTP/1.1 404"), std::string::npos);
    const auto third = raw_exchange(stub.port(), req);
    EXPECT_NE(third.find("HTTP/1.1 500"), std::string::npos);
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 3U);
    EXPECT_EQ(reqs[0].method, "POST");
    EXPECT_EQ(reqs[0].target, "/v1/messages");
    EXPECT_EQ(reqs[0].header("x-api-key"), "k");
    EXPECT_EQ(reqs[0].body, "hello");
}

TEST(StubProvider, FloodEndsWhenTheClientCloses) {
    test::StubProvider stub;
    stub.enqueue({.flood = test::StubFlood::anthropic});
    {
        net::io_context io;
        tcp::socket sock(io);
        sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), stub.port()));
        net::write(sock, net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
        char buf[65536];
        std::size_t got = 0;
        while (got < 200000) {
            got += sock.read_some(net::buffer(buf));
        }
    }
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
    EXPECT_GE(stub.bytes_sent(), 200000U);
}

TEST(StubProvider, FramesDataLinesAsServerSentEvents) {
    EXPECT_EQ(test::StubProvider::sse_from_data_lines("{\"a\":1}\n\n{\"b\":2}\r\n"),
              "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n");
}

} // namespace
