// End-to-end test of `serve --tls-cert/--tls-key`: HTTPS, SSE over TLS and WSS with a
// self-signed certificate made by the openssl CLI for the test.
#include "support/hub_process.hpp"
#include "support/test_certs.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`, `websocket`) both
// resolve, the nearer first.
namespace sluice::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// A self-signed certificate for 127.0.0.1 and localhost, in `dir`; returns its PEM.
std::string make_cert(const TempDir& dir) {
    return make_self_signed(
        dir.file("cert.pem"), dir.file("key.pem"), "IP:127.0.0.1,DNS:localhost");
}

sluice::transport::HttpOptions trusting(const std::string& pem) {
    sluice::transport::HttpOptions opt;
    opt.max_attempts = 1;
    opt.proxy = "";
    opt.connect_timeout = 10s;
    opt.first_byte_timeout = 10s;
    opt.idle_timeout = 10s;
    opt.extra_ca_pem = pem;
    return opt;
}

TEST(HubSecurityTls, ServesHttpsSseAndWssWithItsCertificate) {
    TempDir certs;
    const auto pem = make_cert(certs);
    ASSERT_FALSE(pem.empty()) << "openssl could not make a certificate";
    TempDir dir;
    SluiceProcess hub(
        hub_args(
            dir,
            {"--tls-cert",
             (std::filesystem::path(certs.path()) / "cert.pem").string(),
             "--tls-key",
             (std::filesystem::path(certs.path()) / "key.pem").string()}),
        true,
        HubAuth::as_given);
    ASSERT_EQ(hub.base().rfind("https://", 0), 0U) << hub.output();
    const auto token = hub.token();
    EXPECT_NE(hub.output().find("page: https://127.0.0.1:"), std::string::npos);

    // HTTPS: a JSON request with the token.
    sluice::transport::HttpClient client(trusting(pem));
    std::string body;
    auto created = client.request_blocking(
        {"POST",
         hub.base() + "/v1/seats",
         {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
         R"({"name":"tls"})"},
        sluice::CancellationToken{},
        [&](std::string_view c) {
            body.append(c);
            return true;
        });
    ASSERT_TRUE(created) << client.error_message();
    ASSERT_EQ(created->status, 201U) << created->body;
    const std::string seat(json::parse(body).at("seat").as_string());

    // SSE over TLS: the stream opens with its connected event.
    sluice::transport::HttpClient sse(trusting(pem));
    std::string events;
    (void)sse.request_blocking(
        {"GET", hub.base() + "/v1/seats/" + seat + "/events?access_token=" + token, {}, {}},
        sluice::CancellationToken{},
        [&](std::string_view c) {
            events.append(c);
            return events.find("event: connected") == std::string::npos;
        });
    EXPECT_NE(events.find("event: connected"), std::string::npos) << events;

    // WSS: the handshake over TLS, the connected message, an op answered.
    net::io_context io;
    ssl::context ctx(ssl::context::tls_client);
    ctx.add_certificate_authority(net::buffer(pem));
    ctx.set_verify_mode(ssl::verify_peer);
    websocket::stream<boost::beast::ssl_stream<net::ip::tcp::socket>> ws(io, ctx);
    boost::beast::get_lowest_layer(ws).connect(
        {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
    ws.next_layer().set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    ws.next_layer().handshake(ssl::stream_base::client);
    ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
        req.set(boost::beast::http::field::authorization, "Bearer " + token);
    }));
    ws.handshake("127.0.0.1:" + std::to_string(hub.port()), "/v1/seats/" + seat + "/ws");
    boost::beast::flat_buffer buf;
    ws.read(buf);
    EXPECT_EQ(
        json::parse(boost::beast::buffers_to_string(buf.data())).at("event").as_string(),
        "connected");
    ws.write(net::buffer(std::string(R"({"op":"more","turns":1})")));
    buf.clear();
    ws.read(buf);
    EXPECT_EQ(
        json::parse(boost::beast::buffers_to_string(buf.data())).at("event").as_string(),
        "history");
    ws.close(websocket::close_code::normal);

    // Plain HTTP to the TLS port gets nothing served.
    const auto plain = raw_http(hub.port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 2s);
    EXPECT_EQ(plain.find("200 OK"), std::string::npos);
}

TEST(HubSecurityTls, WarnsWhenListeningBeyondLoopbackWithoutTls) {
    TempDir dir;
    SluiceProcess wide(
        {"serve", "--listen", "0.0.0.0:0", "--data", dir.path(), "--pace", "0"},
        true,
        HubAuth::as_given);
    EXPECT_NE(wide.output().find("without TLS"), std::string::npos) << wide.output();
    TempDir dir2;
    SluiceProcess proxied(
        {"serve", "--listen", "0.0.0.0:0", "--data", dir2.path(), "--pace", "0", "--behind-proxy"},
        true,
        HubAuth::as_given);
    EXPECT_EQ(proxied.output().find("without TLS"), std::string::npos) << proxied.output();
}

} // namespace
} // namespace sluice::test
