// End-to-end tests of the hub's edges: WebSocket ops and handshakes, overload, write timeouts
// and lag, a frame past the client's limit — the real binary, real sockets. Connection edges
// (header timeouts, running out of descriptors): edges_connections_test.cpp.
#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/detail/net.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`, `websocket`) both
// resolve, the nearer first.
namespace sluice::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string fake_agent_cmd() {
    const auto fake = (std::filesystem::path(__FILE__).parent_path() / "../support/fake_agent.py")
                          .lexically_normal()
                          .string();
    return "python3 " + fake;
}

/// A client frame (masked, as RFC 6455 requires of clients).
std::string client_frame(std::uint8_t opcode, std::string_view payload) {
    std::string f;
    f += static_cast<char>(0x80 | opcode);
    if (payload.size() < 126) {
        f += static_cast<char>(0x80 | payload.size());
    } else {
        f += static_cast<char>(0x80 | 126);
        f += static_cast<char>((payload.size() >> 8) & 0xff);
        f += static_cast<char>(payload.size() & 0xff);
    }
    const std::array<char, 4> mask{0x11, 0x22, 0x33, 0x44};
    f.append(mask.data(), mask.size());
    for (std::size_t i = 0; i < payload.size(); ++i) {
        f += static_cast<char>(payload[i] ^ mask[i % 4]);
    }
    return f;
}

/// A minimal WebSocket client over a blocking socket: the handshake is written by hand (so
/// bytes can follow it in the same segment) and server frames are parsed here.
class RawWs {
public:
    explicit RawWs(unsigned port, int rcvbuf = 0) {
        sock_.open(tcp::v4());
        if (rcvbuf > 0) {
            sock_.set_option(net::socket_base::receive_buffer_size(rcvbuf));
        }
        sock_.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)});
    }

    /// Sends the upgrade request for `path`, followed in the same write by `after`.
    void upgrade(const std::string& path, const std::string& after = {}) {
        const std::string req = "GET " + path
                                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                                  "Connection: Upgrade\r\nSec-WebSocket-Key: "
                                  "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                                + after;
        net::write(sock_, net::buffer(req));
        const auto n = net::read_until(sock_, net::dynamic_buffer(buf_), "\r\n\r\n");
        head_ = buf_.substr(0, n);
        buf_.erase(0, n);
    }

    [[nodiscard]] const std::string& head() const { return head_; }

    void send(std::string_view text) { net::write(sock_, net::buffer(client_frame(1, text))); }

    void send_raw(const std::string& bytes) { net::write(sock_, net::buffer(bytes)); }

    /// The next server frame: (opcode, payload). Throws when the connection ends.
    std::pair<int, std::string> read() {
        need(2);
        const auto b0 = static_cast<unsigned char>(buf_[0]);
        std::size_t len = static_cast<unsigned char>(buf_[1]) & 0x7fU;
        std::size_t at = 2;
        if (len == 126) {
            need(4);
            len = (static_cast<std::size_t>(static_cast<unsigned char>(buf_[2])) << 8U)
                  | static_cast<unsigned char>(buf_[3]);
            at = 4;
        } else if (len == 127) {
            need(10);
            len = 0;
            for (std::size_t i = 2; i < 10; ++i) {
                len = (len << 8U) | static_cast<unsigned char>(buf_[i]);
            }
            at = 10;
        }
        need(at + len);
        std::pair<int, std::string> f{static_cast<int>(b0 & 0x0fU), buf_.substr(at, len)};
        buf_.erase(0, at + len);
        return f;
    }

    /// The next text message as JSON (skipping pings).
    json::value message() {
        for (;;) {
            auto [op, payload] = read();
            if (op == 1) {
                return json::parse(payload);
            }
            if (op == 8) {
                throw std::runtime_error("closed: " + payload.substr(2));
            }
        }
    }

private:
    void need(std::size_t n) {
        while (buf_.size() < n) {
            ::pollfd p{sock_.native_handle(), POLLIN, 0}; // nothing for 20 s fails, not hangs
            if (::poll(&p, 1, 20'000) == 0) {
                throw std::runtime_error("nothing from the hub for 20 s");
            }
            std::array<char, 64 * 1024> chunk{};
            const auto got = sock_.read_some(net::buffer(chunk));
            buf_.append(chunk.data(), got);
        }
    }

    net::io_context io_;
    tcp::socket sock_{io_};
    std::string buf_;
    std::string head_;
};

TEST(HubEdges, MalformedWebSocketOpsGetAnErrorAndTheSocketKeepsAnswering) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir));
    RawWs ws(hub.port());
    ws.upgrade("/v1/seats/" + new_seat(hub) + "/ws");
    ASSERT_NE(ws.head().find("101"), std::string::npos) << ws.head();
    ASSERT_EQ(ws.message().at("event").as_string(), "connected");
    for (const char* bad :
         {R"({"op":"more","before":1.5})",
          R"({"op":"more","before":1e30})",
          R"({"op":"more","turns":-3})",
          R"({"op":"more","before":"x"})",
          "[]"}) {
        ws.send(bad);
        const auto m = ws.message();
        EXPECT_EQ(m.at("event").as_string(), "error") << bad;
        EXPECT_EQ(m.at("data").at("error").at("code").as_string(), "bad_request") << bad;
    }
    ws.send(R"({"op":"cancel"})"); // still answering
    EXPECT_EQ(ws.message().at("event").as_string(), "cancelled");
    ws.send(R"({"op":"more","turns":1})");
    EXPECT_EQ(ws.message().at("event").as_string(), "history");
}

TEST(HubEdges, BytesSentWithTheUpgradeRequestReachTheWebSocket) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir));
    RawWs ws(hub.port());
    // Two ops in the same write as the upgrade request: neither may be lost.
    ws.upgrade(
        "/v1/seats/" + new_seat(hub) + "/ws",
        client_frame(1, R"({"op":"cancel"})") + client_frame(1, R"({"op":"more","turns":1})"));
    ASSERT_NE(ws.head().find("101"), std::string::npos) << ws.head();
    std::vector<std::string> events;
    for (int i = 0; i < 3; ++i) {
        events.emplace_back(ws.message().at("event").as_string());
    }
    EXPECT_EQ(std::count(events.begin(), events.end(), "cancelled"), 1);
    EXPECT_EQ(std::count(events.begin(), events.end(), "history"), 1);
    EXPECT_EQ(std::count(events.begin(), events.end(), "connected"), 1);
}

TEST(HubEdges, AFloodOfOpsGetsOverloadedRepliesThenACloseWithAReason) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir));
    RawWs ws(hub.port(), 4096); // a small window: the hub's writer blocks on this client
    ws.upgrade("/v1/seats/" + new_seat(hub) + "/ws");
    std::string flood;
    const auto op = client_frame(1, R"({"op":"cancel"})");
    for (int i = 0; i < 20000; ++i) {
        flood += op;
    }
    ws.send_raw(flood); // the hub keeps reading while its answers are not read
    std::size_t overloaded = 0;
    std::size_t answered = 0;
    int close_code = 0;
    std::string close_reason;
    for (;;) {
        auto [code, payload] = ws.read();
        if (code == 8) {
            ASSERT_GE(payload.size(), 2U);
            close_code = (static_cast<unsigned char>(payload[0]) << 8U)
                         | static_cast<unsigned char>(payload[1]);
            close_reason = payload.substr(2);
            break;
        }
        if (code != 1) {
            continue;
        }
        const auto m = json::parse(payload);
        if (m.at("event") == "error") {
            EXPECT_EQ(m.at("data").at("error").at("code"), "overloaded");
            ++overloaded;
        } else if (m.at("event") == "cancelled") {
            ++answered;
        }
    }
    EXPECT_GE(overloaded, 1U);
    EXPECT_GT(answered, 0U);
    EXPECT_EQ(close_code, 1008); // policy error
    EXPECT_NE(close_reason.find("overloaded"), std::string::npos) << close_reason;
    const auto metrics = http("GET", hub.base() + "/metrics").body;
    EXPECT_EQ(metrics.find("sluice_ws_overloaded_total 0\n"), std::string::npos);
}

std::uint64_t metric(const std::string& text, const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    return at == std::string::npos ? ~std::uint64_t{0}
                                   : std::stoull(text.substr(at + name.size() + 2));
}

// A seat whose window holds a turn with a `bytes`-byte tool result: one large block ("big",
// held in reference form) or many small ones ("bigmany", held whole).
std::string
seat_with_big_frame(const SluiceProcess& hub, std::size_t bytes, const char* how = "bigmany") {
    const auto seat = new_seat(hub, {.name = "t", .agent = "process", .token = {}});
    const auto sent = http(
        "POST",
        hub.base() + "/v1/seats/" + seat + "/messages",
        std::string(R"({"text":")") + how + " " + std::to_string(bytes) + "\"}");
    EXPECT_EQ(sent.status, 202U) << sent.body;
    bool ended = false;
    for (int i = 0; i < 600 && !ended; ++i) { // the seat's own figures: no stream to limit
        const auto s = http("GET", hub.base() + "/v1/seats/" + seat).json;
        ended = s.at("turns").to_number<int>() >= 1 && s.at("state").as_string() == "idle"
                && s.at("frames").to_number<int>() >= 4;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(ended) << "the big turn did not end";
    return seat;
}

// Waits (up to 10 s) until the metric `name` reads `want`; returns what it read last.
std::uint64_t wait_metric(const SluiceProcess& hub, const std::string& name, std::uint64_t want) {
    std::uint64_t n = ~std::uint64_t{0};
    for (int i = 0; i < 100 && n != want; ++i) {
        n = metric(http("GET", hub.base() + "/metrics").body, name);
        if (n != want) {
            std::this_thread::sleep_for(100ms);
        }
    }
    return n;
}

// A subscriber whose writes make no progress for --write-timeout is let go and counted (SSE and
// WebSocket), and resumes by Last-Event-ID; subscribers that read, idle for several write
// timeouts, are kept (the deadline once reached the stream's pending read too and cut every
// stream, reading or not, one write timeout after it began — uncounted).
TEST(HubEdges, AStalledSubscriberIsLetGoAfterTheWriteTimeout) {
    TempDir dir;
    SluiceProcess hub(
        hub_args(dir, {"--agent-cmd", fake_agent_cmd(), "--write-timeout-ms", "500"}));
    const std::string let_go = R"(sluice_subscriber_let_go_total{reason="write_timeout"})";
    const auto idle_seat = new_seat(hub);
    SseClient reader(hub.base() + "/v1/seats/" + idle_seat + "/events");
    ASSERT_TRUE(reader.wait_for([](const auto& ev) { return !ev.empty(); }));
    RawWs ws_reader(hub.port());
    ws_reader.upgrade("/v1/seats/" + idle_seat + "/ws");
    ASSERT_EQ(ws_reader.message().at("event").as_string(), "connected");

    // The connected page (6 MB) is more than the socket buffers hold: a client that never reads
    // stalls its writer.
    const auto seat = seat_with_big_frame(hub, 6U << 20U);
    EXPECT_EQ(metric(http("GET", hub.base() + "/metrics").body, let_go), 0U);
    net::io_context io;
    tcp::socket stalled(io);
    stalled.open(tcp::v4());
    stalled.set_option(net::socket_base::receive_buffer_size(4096));
    stalled.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
    net::write(
        stalled,
        net::buffer(
            "GET /v1/seats/" + seat + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); // never read
    EXPECT_EQ(wait_metric(hub, let_go, 1), 1U) << "the stalled SSE subscriber was not let go";
    EXPECT_EQ(wait_metric(hub, "sluice_subscribers", 2), 2U); // the two readers stay

    RawWs ws_stalled(hub.port(), 4096);
    ws_stalled.upgrade("/v1/seats/" + seat + "/ws"); // never read past the handshake
    EXPECT_EQ(wait_metric(hub, let_go, 2), 2U) << "the stalled WebSocket was not let go";
    EXPECT_EQ(wait_metric(hub, "sluice_subscribers", 2), 2U);

    // The readers, idle for several write timeouts, are still served.
    ws_reader.send(R"({"op":"cancel"})");
    EXPECT_EQ(ws_reader.message().at("event").as_string(), "cancelled");
    const auto before = reader.events().size();
    ASSERT_EQ(
        http("POST", hub.base() + "/v1/seats/" + idle_seat + "/messages", R"({"text":"hi"})")
            .status,
        202U);
    EXPECT_TRUE(reader.wait_for([&](const auto& ev) { return ev.size() > before; }))
        << "an idle reading SSE subscriber was cut";

    // A let-go client resumes by Last-Event-ID.
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat).json;
    const std::string last = std::string(info.at("epoch").as_string()) + ":"
                             + std::to_string(info.at("frames").to_number<std::int64_t>() - 1);
    SseClient resumed(hub.base() + "/v1/seats/" + seat + "/events", last);
    ASSERT_TRUE(resumed.wait_for([](const auto& ev) { return !ev.empty(); }));
    EXPECT_EQ(resumed.events().front().type, "resumed");
    EXPECT_EQ(metric(http("GET", hub.base() + "/metrics").body, let_go), 2U);
}

// A WebSocket `more` below the window takes the path `GET /history` takes (the page is read from
// the transcript on the hub's writer): the same page, for every `before` down to the first turn.
TEST(HubEdges, AWebSocketMoreBelowTheWindowGetsThePageHistoryServes) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--window-cap", "4"}));
    const auto seat = new_seat(hub);
    const std::string url = hub.base() + "/v1/seats/" + seat;
    constexpr int turns = 5;
    for (int i = 0; i < turns; ++i) {
        const auto sent =
            http("POST", url + "/messages", R"({"text":"prompt )" + std::to_string(i) + "\"}");
        ASSERT_EQ(sent.status, 202U) << sent.body;
        bool ended = false;
        for (int k = 0; k < 300 && !ended; ++k) {
            const auto s = http("GET", url).json;
            ended = s.at("turns").to_number<int>() == i + 1 && s.at("state").as_string() == "idle";
            if (!ended) {
                std::this_thread::sleep_for(20ms);
            }
        }
        ASSERT_TRUE(ended) << "turn " << i << " did not end";
    }
    const auto info = http("GET", url).json;
    const auto floor = info.at("window").at("first").to_number<std::uint64_t>();
    ASSERT_GT(floor, 3U) << "the window still holds the first turns";
    RawWs ws(hub.port());
    ws.upgrade("/v1/seats/" + seat + "/ws");
    ASSERT_EQ(ws.message().at("event").as_string(), "connected");
    std::string oldest;
    for (std::uint64_t before = floor; before > 0; --before) {
        ws.send(R"({"op":"more","turns":1,"before":)" + std::to_string(before) + "}");
        const auto m = ws.message();
        ASSERT_EQ(m.at("event").as_string(), "history") << json::serialize(m);
        const auto page = http("GET", url + "/history?turns=1&before=" + std::to_string(before));
        ASSERT_EQ(page.status, 200U) << page.body;
        EXPECT_EQ(m.at("data"), page.json) << "before=" << before;
        const auto& t = m.at("data").at("turns").as_array();
        ASSERT_EQ(t.size(), 1U) << "before=" << before;
        oldest = std::string(t[0].at("frames").at(0).at("message").at("content").as_string());
    }
    EXPECT_EQ(oldest, "prompt 0");
    ws.send(R"({"op":"cancel"})"); // and the socket keeps answering, in order
    EXPECT_EQ(ws.message().at("event").as_string(), "cancelled");
}

TEST(HubEdges, AFrameBeyondTheClientLimitEndsTailWithAFailureNotAReconnectLoop) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--agent-cmd", fake_agent_cmd()}));
    // Many small blocks (nothing to cut), past the CLI's 8 MiB line limit.
    const auto seat = seat_with_big_frame(hub, 9U << 20U);
    const auto err = (std::filesystem::path(dir.path()) / "tail.err").string();
    const std::string cmd = "timeout 30 " SLUICE_BINARY " tail --hub " + hub.base() + " " + seat
                            + " >/dev/null 2>" + err;
    const int rc = std::system(cmd.c_str()); // NOLINT(concurrency-mt-unsafe)
    ASSERT_TRUE(WIFEXITED(rc));
    const int status = WEXITSTATUS(rc);
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_NE(status, 0);
    EXPECT_NE(status, 124) << "sluice tail kept reconnecting";
    EXPECT_NE(ss.str().find("payload_too_large"), std::string::npos) << ss.str();
    EXPECT_EQ(ss.str().find("stream dropped"), std::string::npos) << ss.str();
}

std::string run(const std::string& cmd, int& status) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    std::array<char, 64 * 1024> b{};
    std::size_t n = 0;
    while ((n = std::fread(b.data(), 1, b.size(), p)) > 0) {
        out.append(b.data(), n);
    }
    const int rc = ::pclose(p);
    status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
}

TEST(HubEdges, AnOversizeFrameIsHeldInReferenceFormAndServedWholeFromItsUrl) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--agent-cmd", fake_agent_cmd()}));
    const std::size_t size = 12U << 20U;
    const auto seat = seat_with_big_frame(hub, size, "big");

    // History carries the reference form: the row with its block cut, sizes and sha256.
    const auto page = http("GET", hub.base() + "/v1/seats/" + seat + "/history");
    ASSERT_EQ(page.status, 200U);
    EXPECT_LT(page.body.size(), 64U * 1024U) << "the page carries the whole frame";
    std::int64_t seq = -1;
    json::object ref;
    std::int64_t pos = page.json.at("turns").at(0).at("first").as_int64();
    for (const auto& f : page.json.at("turns").at(0).at("frames").as_array()) {
        if (f.as_object().contains("sluice_ref")) {
            seq = pos;
            ref = f.at("sluice_ref").as_object();
            const std::string cut(f.at("message").at("content").at(0).at("content").as_string());
            EXPECT_EQ(cut.rfind("line 00000000 ", 0), 0U) << cut.substr(0, 40); // the head
            EXPECT_NE(cut.find("bytes,"), std::string::npos);
        }
        ++pos;
    }
    ASSERT_GE(seq, 0) << page.body.substr(0, 400);
    const auto& block = ref.at("blocks").at(0);
    EXPECT_EQ(block.at("bytes").to_number<std::uint64_t>(), size);
    EXPECT_EQ(block.at("path").as_string(), "/message/content/0/content");

    // The stream carries it too (a new subscriber's connected page).
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events");
    ASSERT_TRUE(sub.wait_for([](const auto& ev) { return !ev.empty(); }));
    EXPECT_LT(sub.events().front().data.size(), 64U * 1024U);
    EXPECT_NE(sub.events().front().data.find("sluice_ref"), std::string::npos);

    // The frame's URL serves it whole, as appended: its bytes and sha256 match the reference.
    const std::string url = hub.base() + "/v1/seats/" + seat + "/frames/" + std::to_string(seq);
    const auto whole = http("GET", url);
    ASSERT_EQ(whole.status, 200U);
    EXPECT_EQ(whole.body.size(), ref.at("bytes").to_number<std::uint64_t>());
    EXPECT_EQ(sluice::sha256_hex(whole.body), std::string(ref.at("sha256").as_string()));
    EXPECT_EQ(whole.json.at("message").at("content").at(0).at("content").as_string().size(), size);
    const auto part = http("GET", url, {}, {{"Range", "bytes=10-109"}});
    EXPECT_EQ(part.status, 206U);
    EXPECT_EQ(part.body, whole.body.substr(10, 100));
    const auto last = http("GET", url, {}, {{"Range", "bytes=-5"}});
    EXPECT_EQ(last.body, whole.body.substr(whole.body.size() - 5));
    EXPECT_EQ(http("GET", url, {}, {{"Range", "bytes=999999999-"}}).status, 416U);
    EXPECT_EQ(http("GET", hub.base() + "/v1/seats/" + seat + "/frames/99999").status, 404U);
    const auto info = http("GET", hub.base() + "/v1/seats/" + seat);
    const std::string epoch(info.json.at("epoch").as_string());
    EXPECT_EQ(http("GET", url + "?epoch=" + epoch).body, whole.body); // the epoch it was seen in

    // The CLI shows the cut form with a hint, and the whole frame with --full.
    int status = 0;
    // tail follows forever: it runs in the background until its output holds the cut frame and
    // its hint (a fixed `timeout 4` once ended the ASan binary on a loaded machine before it had
    // printed), then it is ended by its pid.
    const auto out = (std::filesystem::path(dir.path()) / "out").string();
    const auto err = (std::filesystem::path(dir.path()) / "err").string();
    const auto pidfile = (std::filesystem::path(dir.path()) / "pid").string();
    const std::string tail = "timeout 120 " SLUICE_BINARY " tail --hub " + hub.base() + " " + seat
                             + " >" + out + " 2>" + err + " & echo $! >" + pidfile;
    ASSERT_EQ(std::system(("(" + tail + ")").c_str()), 0);
    std::string cut;
    std::string hint;
    for (int i = 0; i < 1200; ++i) {
        cut = sluice::test::slurp(out);
        hint = sluice::test::slurp(err);
        if (cut.find("sluice_ref") != std::string::npos
            && hint.find("--full") != std::string::npos) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(static_cast<pid_t>(std::stol(sluice::test::slurp(pidfile))), SIGTERM);
    EXPECT_LT(cut.size(), 200000U);
    EXPECT_NE(cut.find("sluice_ref"), std::string::npos);
    EXPECT_NE(hint.find("--full"), std::string::npos) << hint;
    const std::string slow_tail =
        "timeout 25 " SLUICE_BINARY " tail --full --hub " + hub.base() + " " + seat;
    auto full = run(slow_tail + " 2>/dev/null | head -c " + std::to_string(size + 1000), status);
    EXPECT_GT(full.size(), size);
    EXPECT_EQ(full.find("sluice_ref"), std::string::npos);

    // A seq names a frame within its epoch only: once the conversation is replaced, the old
    // epoch's seq is refused (409), never answered with another conversation's frame there.
    ASSERT_EQ(http("POST", hub.base() + "/v1/seats/" + seat + "/reset", "{}").status, 200U);
    const auto gone = http("GET", url + "?epoch=" + epoch);
    EXPECT_EQ(gone.status, 409U) << gone.body;
    EXPECT_NE(gone.body.find("conversation was replaced"), std::string::npos) << gone.body;
}

// Reads `sock` until the hub closes it (or `limit` passes); returns everything read.
std::string read_to_end(tcp::socket& sock, std::chrono::milliseconds limit) {
    std::string got;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        ::pollfd p{sock.native_handle(), POLLIN, 0};
        if (::poll(&p, 1, 200) == 0) {
            continue;
        }
        std::array<char, 64 * 1024> chunk{};
        boost::system::error_code ec;
        const auto n = sock.read_some(net::buffer(chunk), ec);
        got.append(chunk.data(), n);
        if (ec) {
            break;
        }
    }
    return got;
}

// A subscriber that falls behind the window front is let go with a reason it can see: an SSE
// comment (`: bye: …`, the last thing on its stream) and a WebSocket close 1013 (try again
// later) with the reason; counted per reason in /metrics. Its writer notices once the write it
// is blocked in completes (the client reads again); a client that never reads at all is let go
// by the write timeout instead (AStalledSubscriberIsLetGoAfterTheWriteTimeout).
TEST(HubEdges, ASubscriberThatLagsPastTheWindowFrontIsToldWhy) {
    TempDir dir;
    SluiceProcess hub(hub_args(dir, {"--agent-cmd", fake_agent_cmd(), "--window-cap", "4"}));
    const std::string lagged = R"(sluice_subscriber_let_go_total{reason="lagged"})";
    const std::string why = "lagged behind the window front; reconnect with Last-Event-ID";
    const auto seat = new_seat(hub, {.name = "t", .agent = "process", .token = {}});
    net::io_context io;
    tcp::socket sse(io);
    sse.open(tcp::v4());
    sse.set_option(net::socket_base::receive_buffer_size(4096));
    sse.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
    net::write(
        sse, net::buffer("GET /v1/seats/" + seat + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    RawWs ws(hub.port(), 4096);
    ws.upgrade("/v1/seats/" + seat + "/ws");
    ASSERT_EQ(wait_metric(hub, "sluice_subscribers", 2), 2U);
    // Four turns of 3 MB frames (held whole) while neither reads: 12 MB, more than the socket
    // buffers take (the send buffer grows to net.ipv4.tcp_wmem's 4 MiB), so their writers
    // block, and the window (4 frames) moves past their cursors.
    for (int turn = 1; turn <= 4; ++turn) {
        ASSERT_EQ(
            http(
                "POST",
                hub.base() + "/v1/seats/" + seat + "/messages",
                R"({"text":"bigmany 3000000"})")
                .status,
            202U);
        bool ended = false;
        for (int i = 0; i < 300 && !ended; ++i) {
            const auto s = http("GET", hub.base() + "/v1/seats/" + seat).json;
            ended = s.at("turns").to_number<int>() >= turn && s.at("state").as_string() == "idle";
            std::this_thread::sleep_for(100ms);
        }
        ASSERT_TRUE(ended) << "turn " << turn << " did not end";
    }
    EXPECT_EQ(metric(http("GET", hub.base() + "/metrics").body, lagged), 0U);

    // They read again: the blocked write completes, the next collect finds the cursor behind
    // the window front, and the stream ends with the reason.
    const auto body = read_to_end(sse, 20s);
    const auto bye = body.rfind(": bye: ");
    ASSERT_NE(bye, std::string::npos) << "read " << body.size() << " bytes, no bye comment";
    EXPECT_EQ(body.substr(bye), ": bye: " + why + "\n\n");
    std::pair<int, std::string> close{0, {}};
    for (int i = 0; i < 10'000 && close.first != 8; ++i) {
        close = ws.read();
    }
    ASSERT_EQ(close.first, 8) << "no close frame";
    ASSERT_GE(close.second.size(), 2U);
    const int code = (static_cast<unsigned char>(close.second[0]) << 8)
                     | static_cast<unsigned char>(close.second[1]);
    EXPECT_EQ(code, 1013); // try again later
    EXPECT_EQ(close.second.substr(2), why);
    EXPECT_EQ(wait_metric(hub, lagged, 2), 2U);
}

} // namespace
} // namespace sluice::test
