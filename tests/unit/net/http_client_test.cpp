// Tests of the HTTP client (and of the loopback StubProvider it is tested against); through a
// proxy: http_client_proxy_test.cpp.
#include "support/run_async.hpp"
#include "support/stub_provider.hpp"
#include "unit/net/http_client_helpers.hpp"

#include <sluice/core/error.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/net/http_client.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

namespace {

using namespace sluice;
using namespace std::chrono_literals;
using test::fast_options;
using test::request;

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
    stub.enqueue(
        {.status = 404, .content_type = "application/json", .body = "{}", .content_length = true});
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
    EXPECT_EQ(
        test::StubProvider::sse_from_data_lines("{\"a\":1}\n\n{\"b\":2}\r\n"),
        "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n");
}

std::uint16_t unused_port() {
    net::io_context io;
    tcp::acceptor a(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

TEST(HttpClient, StreamsABodyChunkByChunk) {
    test::StubProvider stub;
    std::string body;
    for (int i = 0; i < 200; ++i) {
        body += "data: " + std::to_string(i) + "\n\n";
    }
    stub.enqueue({.body = body, .chunk_size = 100, .pace = 1ms});
    transport::HttpClient client(fast_options());
    std::string got;
    int calls = 0;
    const auto r = request(
        client,
        {.method = "POST",
         .url = stub.base_url() + "/v1/x?y=1",
         .headers = {{"X-Test", "1"}},
         .body = "{}"},
        {},
        [&](std::string_view chunk) {
            got += chunk;
            ++calls;
            return true;
        });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(r->status, 200U);
    EXPECT_EQ(r->header("content-type"), "text/event-stream");
    EXPECT_EQ(got, body);
    EXPECT_GT(calls, 1);
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].target, "/v1/x?y=1");
    EXPECT_EQ(reqs[0].header("x-test"), "1");
    EXPECT_EQ(reqs[0].header("host"), "127.0.0.1:" + std::to_string(stub.port()));
    EXPECT_EQ(reqs[0].body, "{}");
}

TEST(HttpClient, ReturnsANonSuccessStatusWithItsBody) {
    test::StubProvider stub;
    stub.enqueue(
        {.status = 404,
         .content_type = "application/json",
         .body = "{\"error\":1}",
         .content_length = true});
    transport::HttpClient client(fast_options());
    bool called = false;
    const auto r = request(client, {.url = stub.base_url() + "/"}, {}, [&](std::string_view) {
        called = true;
        return true;
    });
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404U);
    EXPECT_EQ(r->body, "{\"error\":1}");
    EXPECT_FALSE(called);
    EXPECT_EQ(r->attempts, 1U);
}

TEST(HttpClient, RetriesOverloadAndServerErrorsBeforeTheFirstByte) {
    test::StubProvider stub;
    stub.enqueue({.status = 529, .body = "busy", .content_length = true});
    stub.enqueue(
        {.status = 429,
         .headers = {{"Retry-After", "0"}},
         .body = "slow down",
         .content_length = true});
    stub.enqueue({.body = "data: ok\n\n"});
    auto options = fast_options();
    std::vector<std::string> notices;
    options.on_retry = [&](const std::string& line) { notices.push_back(line); };
    transport::HttpClient client(options);
    std::string got;
    const auto r = request(client, {.url = stub.base_url() + "/"}, {}, [&](std::string_view c) {
        got += c;
        return true;
    });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(r->status, 200U);
    EXPECT_EQ(r->attempts, 3U);
    EXPECT_EQ(got, "data: ok\n\n");
    EXPECT_EQ(stub.request_count(), 3U);
    ASSERT_EQ(notices.size(), 2U);
    EXPECT_NE(notices[0].find("HTTP 529"), std::string::npos);
}

TEST(HttpClient, DoesNotRetryAClientError) {
    test::StubProvider stub;
    stub.enqueue({.status = 400, .body = "bad", .content_length = true});
    stub.enqueue({.body = "data: never\n\n"});
    transport::HttpClient client(fast_options());
    const auto r =
        request(client, {.url = stub.base_url() + "/"}, {}, [](std::string_view) { return true; });
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400U);
    EXPECT_EQ(stub.request_count(), 1U);
}

TEST(HttpClient, ReportsAnUnreachablePort) {
    transport::HttpClient client(fast_options());
    const auto url = "http://127.0.0.1:" + std::to_string(unused_port()) + "/";
    const auto r = request(client, {.url = url}, {}, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::io_error);
    EXPECT_NE(client.error_message().find("cannot connect to 127.0.0.1"), std::string::npos)
        << client.error_message();
}

TEST(HttpClient, RejectsABadUrl) {
    transport::HttpClient client(fast_options());
    for (const char* url : {"ftp://x/", "not a url", "http:///nohost"}) {
        const auto r = request(client, {.url = url}, {}, [](std::string_view) { return true; });
        ASSERT_FALSE(r) << url;
        EXPECT_EQ(r.error(), errc::bad_request) << url;
    }
}

TEST(HttpClient, TimesOutWaitingForTheFirstByte) {
    // A listener that never accepts: the connect succeeds (backlog), no answer ever comes.
    net::io_context io;
    tcp::acceptor silent(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    auto options = fast_options();
    options.first_byte_timeout = 200ms;
    options.max_attempts = 1;
    transport::HttpClient client(options);
    const auto url = "http://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/";
    const auto r = request(client, {.url = url}, {}, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::timed_out);
    EXPECT_NE(client.error_message().find("no response"), std::string::npos);
}

TEST(HttpClient, ReportsABodyCutOffMidStream) {
    test::StubProvider stub;
    stub.enqueue({.body = "data: partial", .truncate = true});
    transport::HttpClient client(fast_options());
    const auto r =
        request(client, {.url = stub.base_url() + "/"}, {}, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::io_error);
    EXPECT_NE(client.error_message().find("cut off"), std::string::npos) << client.error_message();
}

TEST(HttpClient, StopsWhenTheCallbackSaysSoAndClosesTheStream) {
    test::StubProvider stub;
    stub.enqueue({.flood = test::StubFlood::openai});
    transport::HttpClient client(fast_options());
    std::size_t got = 0;
    const auto r = request(client, {.url = stub.base_url() + "/"}, {}, [&](std::string_view c) {
        got += c.size();
        return got < 100000;
    });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_GE(got, 100000U);
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
}

TEST(HttpClient, CancelFromAnotherThreadEndsAFloodingStream) {
    test::StubProvider stub;
    stub.enqueue({.pace = 1ms, .flood = test::StubFlood::anthropic});
    transport::HttpClient client(fast_options());
    CancellationToken cancel;
    std::atomic<std::size_t> got{0};
    std::thread canceller([&] {
        while (got.load() < 20000) {
            std::this_thread::sleep_for(1ms);
        }
        cancel.cancel();
    });
    const auto r = request(client, {.url = stub.base_url() + "/"}, cancel, [&](std::string_view c) {
        got += c.size();
        return true;
    });
    canceller.join();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
}

TEST(HttpClient, CancelFromAnotherThreadEndsARequestMidBodyPromptly) {
    // The request runs on the test's own one-thread io_context. A raw server sends the head and
    // the first body bytes, then nothing: the client waits in a read that no data will end.
    // The token is cancelled from a plain thread; only the close posted to the request's
    // executor can end that read, and it must, at once, with errc::cancelled.
    net::io_context server_io;
    tcp::acceptor acceptor(server_io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    std::atomic<bool> server_saw_close{false};
    std::thread server([&] {
        tcp::socket sock(server_io);
        acceptor.accept(sock);
        char buf[4096];
        boost::system::error_code ec;
        (void)sock.read_some(net::buffer(buf), ec); // the request (small: one read)
        const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
        net::write(sock, net::buffer(head), ec);
        while (!ec) {
            (void)sock.read_some(net::buffer(buf), ec); // until the client closes
        }
        server_saw_close = true;
    });
    auto options = fast_options();
    options.idle_timeout = 60s;
    transport::HttpClient client(options);
    CancellationToken cancel;
    std::atomic<std::size_t> got{0};
    bool reader_on_io_thread = true;
    const auto io_thread = std::this_thread::get_id();
    std::chrono::steady_clock::time_point cancelled_at;
    std::thread canceller([&] {
        while (got.load() == 0) {
            std::this_thread::sleep_for(1ms);
        }
        std::this_thread::sleep_for(20ms); // the client is back in its read
        cancelled_at = std::chrono::steady_clock::now();
        cancel.cancel();
    });
    net::io_context io;
    const auto url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/";
    const auto r = test::run_async(io, [&] {
        return client.request({.url = url}, cancel, [&](std::string_view c) {
            reader_on_io_thread = reader_on_io_thread && std::this_thread::get_id() == io_thread;
            got += c.size();
            return true;
        });
    });
    const auto returned_at = std::chrono::steady_clock::now();
    canceller.join();
    server.join();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_EQ(client.error_message(), "cancelled");
    EXPECT_EQ(got.load(), 5U);
    EXPECT_TRUE(reader_on_io_thread);
    EXPECT_TRUE(server_saw_close.load());
    EXPECT_LT(returned_at - cancelled_at, 5s); // generous: it is milliseconds
}

TEST(HttpClient, RunsOnTheAwaitingCoroutinesStrand) {
    test::StubProvider stub;
    stub.enqueue({.body = "data: on a strand\n\n", .chunk_size = 3});
    transport::HttpClient client(fast_options());
    net::io_context io;
    const auto strand = net::make_strand(io.get_executor());
    std::string got;
    bool on_strand = true;
    const auto r = test::run_async(io, strand, [&] {
        return client.request({.url = stub.base_url() + "/"}, {}, [&](std::string_view c) {
            on_strand = on_strand && strand.running_in_this_thread();
            got += c;
            return true;
        });
    });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(got, "data: on a strand\n\n");
    EXPECT_TRUE(on_strand);
}

TEST(HttpClient, BlockingFormRunsTheSameRequest) {
    test::StubProvider stub;
    stub.enqueue({.body = "data: blocking\n\n", .chunk_size = 4});
    transport::HttpClient client(fast_options());
    std::string got;
    const auto r =
        client.request_blocking({.url = stub.base_url() + "/"}, {}, [&](std::string_view c) {
            got += c;
            return true;
        });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(r->status, 200U);
    EXPECT_EQ(got, "data: blocking\n\n");
}

TEST(HttpClient, ReturnsAtOnceWhenAlreadyCancelled) {
    test::StubProvider stub;
    transport::HttpClient client(fast_options());
    CancellationToken cancel;
    cancel.cancel();
    const auto r = request(
        client, {.url = stub.base_url() + "/"}, cancel, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_EQ(stub.request_count(), 0U);
}

TEST(HttpClient, SpeaksTlsWithSniAndATrustedCertificate) {
    test::StubProvider stub({.tls = true});
    stub.enqueue({.body = "data: secret\n\n", .chunk_size = 5});
    auto options = fast_options();
    options.extra_ca_pem = stub.ca_pem();
    transport::HttpClient client(options);
    std::string got;
    const auto r =
        request(client, {.url = stub.base_url() + "/v1/messages"}, {}, [&](std::string_view c) {
            got += c;
            return true;
        });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(r->status, 200U);
    EXPECT_EQ(got, "data: secret\n\n");
    const auto reqs = stub.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].sni, "localhost");
    EXPECT_EQ(reqs[0].target, "/v1/messages");
}

TEST(HttpClient, RefusesAnUntrustedCertificate) {
    test::StubProvider stub({.tls = true});
    auto options = fast_options();
    options.max_attempts = 1;
    transport::HttpClient client(options);
    const auto r =
        request(client, {.url = stub.base_url() + "/"}, {}, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::io_error);
    EXPECT_NE(client.error_message().find("TLS handshake with localhost"), std::string::npos)
        << client.error_message();
    EXPECT_EQ(stub.request_count(), 0U);
}

TEST(HttpClient, CancelEndsATlsStream) {
    test::StubProvider stub({.tls = true});
    stub.enqueue({.pace = 1ms, .flood = test::StubFlood::openai});
    auto options = fast_options();
    options.extra_ca_pem = stub.ca_pem();
    transport::HttpClient client(options);
    CancellationToken cancel;
    std::size_t got = 0;
    const auto r = request(client, {.url = stub.base_url() + "/"}, cancel, [&](std::string_view c) {
        got += c.size();
        if (got > 20000) {
            cancel.cancel(); // from the reading thread itself: the next read must not block
        }
        return true;
    });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_TRUE(stub.wait_closed_by_client(1, 10s));
}

TEST(HttpClient, TimesOutABodyThatStalls) {
    test::StubProvider stub;
    stub.enqueue({.body = "data: a\n\ndata: b\n\n", .chunk_size = 10, .pace = 2s});
    auto options = fast_options();
    options.idle_timeout = 100ms;
    options.first_byte_timeout = 5s;
    transport::HttpClient client(options);
    const auto r =
        request(client, {.url = stub.base_url() + "/"}, {}, [](std::string_view) { return true; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::timed_out);
    EXPECT_NE(client.error_message().find("stalled"), std::string::npos) << client.error_message();
}

TEST(HttpClient, CancelFromTheReaderEndsAFullSpeedFlood) {
    // The stub writes as fast as loopback allows (its send queue stays full); the reader keeps
    // up, then cancels from its own callback after 8 MB, as the runtime does when its caller
    // goes away. The stub must see the close at once (an abortive close, not a FIN that
    // leaves it blocked on a full queue).
    test::StubProvider stub;
    stub.enqueue({.flood = test::StubFlood::anthropic, .flood_delta_bytes = 1024});
    transport::HttpClient client(fast_options());
    CancellationToken cancel;
    std::size_t got = 0;
    const auto r = request(client, {.url = stub.base_url() + "/"}, cancel, [&](std::string_view c) {
        got += c.size();
        if (got > (8U << 20U)) {
            cancel.cancel();
        }
        return true;
    });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::cancelled);
    EXPECT_TRUE(stub.wait_closed_by_client(1, 5s));
}

} // namespace
