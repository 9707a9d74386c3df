// End-to-end tests of the hub's gate: Host and Origin checks, JSON-only state changes, the
// default token, viewer tokens, expiry and revocation, the wrong-token backoff.
#include "support/hub_process.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`, `websocket`) both
// resolve, the nearer first.
namespace sluice::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<std::string> serve_args(const TempDir& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{
        "serve", "--listen", "127.0.0.1:0", "--data", dir.path(), "--pace", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

unsigned status_of(const std::string& response) {
    if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) {
        return 0;
    }
    return static_cast<unsigned>(std::stoul(response.substr(9, 3)));
}

std::string cli_output(std::vector<std::string> args) {
    SluiceProcess p(std::move(args), false);
    EXPECT_EQ(p.wait(20s), 0) << p.output();
    auto out = p.output();
    out.erase(out.find_last_not_of('\n') + 1);
    return out;
}

// The status of a WebSocket handshake to `target` with `origin` (empty: none) and `token`.
unsigned ws_handshake_status(
    unsigned port,
    const std::string& target,
    const std::string& origin,
    const std::string& token = {}) {
    net::io_context io;
    websocket::stream<net::ip::tcp::socket> ws(io);
    ws.next_layer().connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)});
    ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
        if (!origin.empty()) {
            req.set(boost::beast::http::field::origin, origin);
        }
        if (!token.empty()) {
            req.set(boost::beast::http::field::authorization, "Bearer " + token);
        }
    }));
    websocket::response_type res;
    boost::system::error_code ec;
    ws.handshake(res, "127.0.0.1:" + std::to_string(port), target, ec);
    return res.result_int();
}

// ---------------------------------------------------------------- Host, Origin, JSON

TEST(HubSecurity, ACrossOriginTextPlainPostCreatesNoSeat) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir));
    const auto port = hub.port();
    // What any web page can send without a preflight: a text/plain "simple" POST.
    const std::string body = R"({"name":"evil"})";
    const auto crossed = raw_http(
        port,
        "POST /v1/seats HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port)
            + "\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\nContent-Length: "
            + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    EXPECT_EQ(status_of(crossed), 403U) << crossed;
    EXPECT_NE(crossed.find("cross-origin"), std::string::npos);
    // Without an Origin (a non-browser client), text/plain is still not JSON.
    const auto plain = raw_http(
        port,
        "POST /v1/seats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        "Content-Length: "
            + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    EXPECT_EQ(status_of(plain), 415U) << plain;
    const auto none = raw_http(
        port,
        "POST /v1/seats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
            + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    EXPECT_EQ(status_of(none), 415U) << none;
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats").json.at("seats").as_array().size(), 0U);
    // The hub's own origin is let in (the page's fetch carries it).
    auto own = http(
        "POST",
        hub.base() + "/v1/seats",
        body,
        {{"Origin", "http://127.0.0.1:" + std::to_string(port)}});
    EXPECT_EQ(own.status, 201U) << own.body;
}

TEST(HubSecurity, AForeignHostIsMisdirected) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir));
    const auto port = hub.port();
    // DNS rebinding: the attacker's name now resolves to 127.0.0.1; the browser sends it as Host.
    const std::vector<std::string> foreign{
        "evil.example",
        "evil.example:" + std::to_string(port),
        "127.0.0.1.evil.example",
        "localhost.",
        "[::2]:1"};
    for (const auto& host : foreign) {
        const auto r = raw_http(
            port, "GET /v1/seats HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
        EXPECT_EQ(status_of(r), 421U) << host << ": " << r;
    }
    const std::vector<std::string> own{"127.0.0.1", "localhost:" + std::to_string(port), "[::1]:1"};
    for (const auto& host : own) {
        const auto r = raw_http(
            port, "GET /v1/seats HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
        EXPECT_EQ(status_of(r), 200U) << host << ": " << r;
    }
    // --allow-host adds a name.
    TempDir dir2;
    SluiceProcess named(serve_args(dir2, {"--allow-host", "hub.lan"}));
    const auto ok = raw_http(
        named.port(), "GET /v1/seats HTTP/1.1\r\nHost: hub.lan:9\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(status_of(ok), 200U) << ok;
}

TEST(HubSecurity, AForeignOriginIsRefusedOnWebSocketAndSseButMayLoadThePage) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir));
    const auto port = hub.port();
    const auto seat = new_seat(hub);
    const std::string own = "http://127.0.0.1:" + std::to_string(port);
    EXPECT_EQ(ws_handshake_status(port, "/v1/seats/" + seat + "/ws", "http://evil.example"), 403U);
    EXPECT_EQ(ws_handshake_status(port, "/v1/seats/" + seat + "/ws", "null"), 403U);
    EXPECT_EQ(ws_handshake_status(port, "/v1/seats/" + seat + "/ws", own), 101U);
    EXPECT_EQ(ws_handshake_status(port, "/v1/seats/" + seat + "/ws", ""), 101U);
    const auto sse = raw_http(
        port,
        "GET /v1/seats/" + seat
            + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n",
        2s);
    EXPECT_EQ(status_of(sse), 403U) << sse;
    const auto page = raw_http(
        port,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nConnection: "
        "close\r\n\r\n");
    EXPECT_EQ(status_of(page), 200U);
    // --allow-origin lets one in.
    TempDir dir2;
    SluiceProcess open(serve_args(dir2, {"--allow-origin", "https://app.example"}));
    const auto seat2 = new_seat(open);
    EXPECT_EQ(
        ws_handshake_status(open.port(), "/v1/seats/" + seat2 + "/ws", "https://app.example"),
        101U);
}

// ---------------------------------------------------------------- the default token

TEST(HubSecurity, ADefaultHubMakesAPrivateTokenAndWantsIt) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir), true, HubAuth::as_given);
    const auto token = hub.token();
    ASSERT_EQ(token.size(), 64U) << hub.output();

    // The token file: mode 0600, holding what the page link carries.
    struct stat st {};

    ASSERT_EQ(::stat((std::filesystem::path(dir.path()) / "token").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777U, 0600U);
    std::ifstream in(std::filesystem::path(dir.path()) / "token");
    std::string stored;
    in >> stored;
    EXPECT_EQ(stored, token);
    EXPECT_NE(hub.output().find("page: " + hub.base() + "/#token=" + token), std::string::npos);

    EXPECT_EQ(http("GET", hub.base() + "/v1/seats").status, 401U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(token)).status, 200U);
    auto health = http("GET", hub.base() + "/healthz");
    EXPECT_EQ(health.status, 200U);
    EXPECT_EQ(health.body, "ok");
    // A query token only where a browser cannot send a header.
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats?access_token=" + token).status, 401U);
    const auto seat = new_seat(hub, {.name = "t", .agent = {}, .token = token});
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events?access_token=" + token);
    EXPECT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }, 10s));
    EXPECT_EQ(ws_handshake_status(hub.port(), "/v1/seats/" + seat + "/ws", "", token), 101U);
    EXPECT_EQ(ws_handshake_status(hub.port(), "/v1/seats/" + seat + "/ws", ""), 401U);
    EXPECT_EQ(
        ws_handshake_status(hub.port(), "/v1/seats/" + seat + "/ws?access_token=" + token, ""),
        101U);
    sub.stop();

    // A restart keeps the token.
    hub.terminate();
    SluiceProcess again(serve_args(dir), true, HubAuth::as_given);
    EXPECT_EQ(again.token(), token);
    // The query token never reaches a log line.
    EXPECT_EQ(again.output().find("access_token=" + token), std::string::npos);
}

TEST(HubSecurity, AWrongTokenOfEveryLengthIsRefused) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir, {"--auth-free-failures", "100000"}), true, HubAuth::as_given);
    const auto token = hub.token();
    ASSERT_FALSE(token.empty());
    std::vector<std::string> wrong;
    for (std::size_t n = 0; n <= 80; ++n) {
        wrong.push_back(
            token.substr(0, std::min(n, token.size())) + std::string(n > 64 ? n - 64 : 0, 'a'));
    }
    wrong.push_back(token + "0");
    wrong.push_back(std::string(4000, 'x'));
    std::string flipped = token;
    flipped.back() = flipped.back() == '0' ? '1' : '0';
    wrong.push_back(flipped);
    for (const auto& w : wrong) {
        if (w == token) {
            continue;
        }
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(w)).status, 401U) << w.size();
    }
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, {{"Authorization", token}}).status, 401U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(token)).status, 200U);
}

TEST(HubSecurity, RepeatedWrongTokensAreHeldBackWithRetryAfter) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir, {"--auth-free-failures", "3"}), true, HubAuth::as_given);
    const auto token = hub.token();
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer("wrong")).status, 401U);
    }
    // The fourth wrong token starts a 1 s interval; then even the right one waits.
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer("wrong")).status, 401U);
    const auto held = raw_http(
        hub.port(),
        "GET /v1/seats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
            + "\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(status_of(held), 429U) << held;
    EXPECT_NE(held.find("Retry-After: 1\r\n"), std::string::npos) << held;
    EXPECT_EQ(http("GET", hub.base() + "/healthz").status, 200U); // the probe is not held
    std::this_thread::sleep_for(1100ms);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(token)).status, 200U);
    // The next wrong one doubles the interval.
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer("wrong")).status, 401U);
    const auto longer = raw_http(
        hub.port(), "GET /v1/seats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    EXPECT_NE(longer.find("Retry-After: 2\r\n"), std::string::npos) << longer;
    // Logged once per interval, not once per request. The log reaches the test through a pipe
    // read on another thread: wait (bounded) for the second interval's line to arrive.
    const auto count = [&hub](std::string& out) {
        out = hub.output();
        std::size_t n = 0;
        for (auto at = out.find("repeated wrong tokens"); at != std::string::npos;
             at = out.find("repeated wrong tokens", at + 1)) {
            ++n;
        }
        return n;
    };
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (count(out) < 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    std::this_thread::sleep_for(100ms); // a third line (one per request) would show by now
    EXPECT_EQ(count(out), 2U) << out;
}

TEST(HubSecurity, NoTokenIsForLoopbackOnlyAndSaysSo) {
    TempDir dir;
    SluiceProcess open(serve_args(dir, {"--no-token"}));
    EXPECT_NE(open.output().find("no token (--no-token)"), std::string::npos);
    TempDir dir2;
    SluiceProcess wide(
        {"serve", "--listen", "0.0.0.0:0", "--data", dir2.path(), "--no-token"}, false);
    EXPECT_EQ(wide.wait(10s), 2);
}

// ---------------------------------------------------------------- viewer tokens

TEST(HubSecurity, AViewerTokenWatchesButCannotAct) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir), true, HubAuth::as_given);
    const auto owner = hub.token();
    const auto seat = new_seat(hub, {.name = "t", .agent = {}, .token = owner});
    const auto viewer = cli_output({"token", "new", "--viewer", "--data", dir.path()});
    ASSERT_EQ(viewer.size(), 64U) << viewer;
    const auto base = hub.base();
    // Watching.
    EXPECT_EQ(http("GET", base + "/v1/seats", {}, bearer(viewer)).status, 200U);
    EXPECT_EQ(http("GET", base + "/v1/seats/" + seat, {}, bearer(viewer)).status, 200U);
    EXPECT_EQ(
        http("GET", base + "/v1/seats/" + seat + "/history", {}, bearer(viewer)).status, 200U);
    EXPECT_EQ(http("GET", base + "/v1/stats", {}, bearer(viewer)).status, 200U);
    auto who = http("GET", base + "/v1/whoami", {}, bearer(viewer));
    EXPECT_EQ(who.json.at("role").as_string(), "viewer");
    SseClient sub(base + "/v1/seats/" + seat + "/events?access_token=" + viewer);
    EXPECT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }, 10s));

    // Acting: every state-changing route, 403 with the reason.
    struct Route {
        const char* method;
        std::string path;
        std::string body;
    };

    const std::vector<Route> acts{
        {"POST", "/v1/seats", R"({"name":"x"})"},
        {"POST", "/v1/seats/" + seat + "/messages", R"({"text":"hi"})"},
        {"POST", "/v1/seats/" + seat + "/cancel", ""},
        {"POST", "/v1/seats/" + seat + "/reset", "{}"},
        {"DELETE", "/v1/seats/" + seat, ""},
        {"POST", "/v1/seats/" + seat + "/permissions/p1", R"({"behavior":"allow"})"},
        {"PUT", "/v1/seats/" + seat, "{}"},
        {"PATCH", "/v1/seats/" + seat, "{}"},
    };
    for (const auto& r : acts) {
        auto got = http(r.method, base + r.path, r.body, bearer(viewer));
        EXPECT_EQ(got.status, 403U) << r.method << " " << r.path << ": " << got.body;
        EXPECT_NE(got.body.find("viewer token may watch but not act"), std::string::npos);
    }
    EXPECT_EQ(http("GET", base + "/v1/seats/" + seat, {}, bearer(owner)).status, 200U);
    // Over the WebSocket: more is watching; send and cancel are acting.
    net::io_context io;
    websocket::stream<net::ip::tcp::socket> ws(io);
    ws.next_layer().connect(
        {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
    ws.handshake("127.0.0.1", "/v1/seats/" + seat + "/ws?access_token=" + viewer);
    auto read = [&ws] {
        boost::beast::flat_buffer buf;
        ws.read(buf);
        return json::parse(boost::beast::buffers_to_string(buf.data()));
    };
    ASSERT_EQ(read().at("event").as_string(), "connected");
    ws.write(net::buffer(std::string(R"({"op":"send","text":"no"})")));
    auto refused = read();
    EXPECT_EQ(refused.at("event").as_string(), "error");
    EXPECT_NE(json::serialize(refused).find("viewer"), std::string::npos);
    ws.write(net::buffer(std::string(R"({"op":"cancel"})")));
    EXPECT_EQ(read().at("event").as_string(), "error");
    ws.write(net::buffer(std::string(R"({"op":"reset"})")));
    EXPECT_EQ(read().at("event").as_string(), "error");
    ws.write(net::buffer(std::string(R"({"op":"more","turns":1})")));
    EXPECT_EQ(read().at("event").as_string(), "history");
    ws.close(websocket::close_code::normal);
    EXPECT_EQ(
        http("GET", base + "/v1/seats/" + seat, {}, bearer(owner))
            .json.at("turns")
            .to_number<int>(),
        0);
}

TEST(HubSecurity, ASeatViewerSeesOnlyItsSeat) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir), true, HubAuth::as_given);
    const auto owner = hub.token();
    const auto mine = new_seat(hub, {.name = "t", .agent = {}, .token = owner});
    const auto other = new_seat(hub, {.name = "t", .agent = {}, .token = owner});
    const auto viewer =
        cli_output({"token", "new", "--viewer", "--seat", mine, "--data", dir.path()});
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + mine, {}, bearer(viewer)).status, 200U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + other, {}, bearer(viewer)).status, 403U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(viewer)).status, 403U);
    EXPECT_EQ(
        http("GET", hub.base() + "/v1/whoami", {}, bearer(viewer)).json.at("seat").as_string(),
        mine);
}

TEST(HubSecurity, ExpiredAndRevokedViewerTokensAreRefused) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir), true, HubAuth::as_given);
    const auto data = dir.path();
    const auto kept =
        cli_output({"token", "new", "--viewer", "--expires", "never", "--data", data});
    // 4 s: room for a slow (sanitized, loaded) hub to answer while the token still lives.
    const auto brief = cli_output({"token", "new", "--viewer", "--expires", "4s", "--data", data});
    const auto minted = std::chrono::steady_clock::now();
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(brief)).status, 200U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(kept)).status, 200U);
    std::this_thread::sleep_until(minted + 5s);
    auto expired = http("GET", hub.base() + "/v1/seats", {}, bearer(brief));
    EXPECT_EQ(expired.status, 401U);
    EXPECT_NE(expired.body.find("expired"), std::string::npos) << expired.body;
    // list shows ids and never a token; revoke by id takes effect without a restart.
    const auto list = cli_output({"token", "list", "--data", data});
    EXPECT_EQ(list.find(kept), std::string::npos);
    std::string id;
    {
        std::ifstream in(std::filesystem::path(dir.path()) / "tokens.json");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(text.find(kept), std::string::npos); // stored hashed
        auto v = json::parse(text);
        for (const auto& t : v.at("tokens").as_array()) {
            if (t.at("expires").as_int64() == 0) {
                id = std::string(t.at("id").as_string());
            }
        }
    }
    ASSERT_FALSE(id.empty());
    EXPECT_NE(list.find(id), std::string::npos);
    EXPECT_NE(
        cli_output({"token", "revoke", id, "--data", data}).find("revoked"), std::string::npos);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(kept)).status, 401U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats", {}, bearer(hub.token())).status, 200U);
}

// ---------------------------------------------------------------- README, as written

// README's walkthrough: `sluice new demo`, `send`, `tail` with no token flag, run where the hub
// keeps its default data dir, against a hub with its default token. Port 8420 when free (as
// written); otherwise any port, named with --hub.
TEST(HubSecurity, TheReadmeWalkthroughWorksAgainstADefaultTokenHub) {
    TempDir dir;
    const std::string cwd = dir.path();
    std::unique_ptr<SluiceProcess> hub;
    std::vector<std::string> hub_flag;
    try {
        hub = std::make_unique<SluiceProcess>(
            std::vector<std::string>{"serve", "--pace", "0"}, true, HubAuth::as_given, cwd);
    } catch (const std::exception&) {
        hub = std::make_unique<SluiceProcess>(
            std::vector<std::string>{"serve", "--listen", "127.0.0.1:0", "--pace", "0"},
            true,
            HubAuth::as_given,
            cwd);
        hub_flag = {"--hub", ""};
    }
    if (!hub_flag.empty()) {
        hub_flag[1] = hub->base();
    }
    ASSERT_FALSE(hub->token().empty());
    auto cli = [&](std::vector<std::string> args) {
        args.insert(args.end(), hub_flag.begin(), hub_flag.end());
        SluiceProcess p(std::move(args), false, HubAuth::as_given, cwd);
        EXPECT_EQ(p.wait(30s), 0) << p.output();
        return p.output();
    };
    auto seat = cli({"new", "demo"});
    seat.erase(seat.find_last_not_of('\n') + 1);
    ASSERT_FALSE(seat.empty());
    EXPECT_NE(cli({"send", seat, "hello"}).find("no network and no API key"), std::string::npos);
    std::vector<std::string> tail_args{"tail", seat, "--previews"};
    tail_args.insert(tail_args.end(), hub_flag.begin(), hub_flag.end());
    SluiceProcess tail(tail_args, false, HubAuth::as_given, cwd);
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    while (tail.output().find("hello") == std::string::npos
           && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_NE(tail.output().find("hello"), std::string::npos);
}

// ---------------------------------------------------------------- behind a TLS proxy

// What a TLS proxy on this machine sends for the page it serves at https://hub.example: the
// page's own Origin, the name people use as Host, and `forwarded_proto` (empty: no header).
std::string proxied_post(const std::string& forwarded_proto) {
    const std::string body = R"({"name":"p"})";
    return "POST /v1/seats HTTP/1.1\r\nHost: hub.example\r\nOrigin: https://hub.example\r\n"
           + (forwarded_proto.empty() ? std::string()
                                      : "X-Forwarded-Proto: " + forwarded_proto + "\r\n")
           + "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size())
           + "\r\nConnection: close\r\n\r\n" + body;
}

std::string proxied_ws_upgrade(const std::string& seat) {
    return "GET /v1/seats/" + seat
           + "/ws HTTP/1.1\r\nHost: hub.example\r\nOrigin: https://hub.example\r\n"
             "X-Forwarded-Proto: https\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
}

TEST(HubSecurity, BehindAProxyTheForwardedProtoFromLoopbackMakesTheHttpsPageOurs) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir, {"--allow-host", "hub.example", "--behind-proxy"}));
    const auto port = hub.port();
    const auto ok = raw_http(port, proxied_post("https"));
    EXPECT_EQ(status_of(ok), 201U) << ok;
    // The WebSocket of that page too (the socket ends at the timeout: the upgrade held).
    const auto seat = new_seat(hub);
    const auto ws = raw_http(port, proxied_ws_upgrade(seat), 1s);
    EXPECT_EQ(status_of(ws), 101U) << ws;
    // Without the header the hub's own origin is http://hub.example: the https page is foreign.
    const auto bare = raw_http(port, proxied_post(""));
    EXPECT_EQ(status_of(bare), 403U) << bare;
    const auto plain = raw_http(port, proxied_post("http"));
    EXPECT_EQ(status_of(plain), 403U) << plain;
    // The last value is the one the proxy wrote; a client's own header before it is not.
    const auto spoofed = raw_http(port, proxied_post("https, http"));
    EXPECT_EQ(status_of(spoofed), 403U) << spoofed;
}

TEST(HubSecurity, WithoutBehindProxyTheForwardedProtoIsIgnored) {
    TempDir dir;
    SluiceProcess hub(serve_args(dir, {"--allow-host", "hub.example"}));
    const auto port = hub.port();
    const auto refused = raw_http(port, proxied_post("https"));
    EXPECT_EQ(status_of(refused), 403U) << refused;
    EXPECT_NE(refused.find("cross-origin"), std::string::npos) << refused;
    const auto seat = new_seat(hub);
    const auto ws = raw_http(port, proxied_ws_upgrade(seat), 1s);
    EXPECT_EQ(status_of(ws), 403U) << ws;
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats").json.at("seats").as_array().size(), 1U);
}

} // namespace
} // namespace sluice::test
