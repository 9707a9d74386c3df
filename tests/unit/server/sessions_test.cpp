// The failure matrix: the HTTP session, the SSE stream and the WebSocket session over
// beast::test::stream, failing at I/O operation N = 0, 1, … until a run succeeds. Every
// failure must end the session cleanly: no exception, the connection counter back to zero,
// the subscriber detached. Shutdown (the connection gate closing) ends live ones in order.
#include "test_stream_sessions.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/forward.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/hub/wire.hpp>
#include <sluice/hub/writer.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice;
using namespace std::chrono_literals;
using server::Connections;

// An agent that never runs a turn (nothing here sends a prompt).
class IdleAgent final : public runtime::Agent {
public:
    void start_turn(std::string, CancellationToken, std::shared_ptr<runtime::TurnSink>) override {}

    [[nodiscard]] std::string kind() const override { return "idle"; }
};

// A hub with one seat (an idle agent) and the server's state.
struct Rig {
    net::io_context io;
    test::TempDir dir;
    std::unique_ptr<hub::Hub> hub;
    std::shared_ptr<server::Server::Impl> s;
    std::string seat;

    // `heartbeat`: none inside a test by default (the matrix counts only the writes it causes).
    explicit Rig(std::chrono::milliseconds heartbeat = 1h) {
        hub::HubConfig hc;
        hc.data_dir = dir.path();
        hc.make_agent = [](const hub::SeatSpec&,
                           std::vector<boost::json::object>,
                           const boost::asio::any_io_executor&) -> hub::AgentOrReason {
            return {std::make_unique<IdleAgent>(), {}};
        };
        hub = std::make_unique<hub::Hub>(io, std::move(hc));
        auto created = hub->create(hub::SeatSpec{});
        EXPECT_TRUE(created);
        seat = (*created)->id();
        server::ServerConfig cfg;
        cfg.heartbeat = heartbeat;
        cfg.max_body_bytes = 64;
        s = std::make_shared<server::Server::Impl>(io, *hub, cfg);
    }

    ~Rig() {
        hub->shutdown();
        settle();
    }

    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;

    // Runs every handler that is ready (timers far in the future stay pending).
    void settle() {
        for (int i = 0; i < 1000; ++i) {
            io.restart();
            if (io.poll() == 0) {
                break;
            }
        }
    }

    // A fresh gate for one run (a closed gate stays closed).
    void new_gate() { s->connections = std::make_shared<Connections>(100); }
};

// One run of a session: serves `stream` and records how it ended.
struct SessionEnd {
    bool ended{false};
    std::exception_ptr error;
};

void spawn_session(Rig& rig, beast::test::stream stream, SessionEnd& run) {
    auto ticket = rig.s->connections->enter();
    ASSERT_TRUE(ticket);
    net::co_spawn(
        rig.io,
        server::serve_http<beast::test::stream>(rig.s, std::move(stream), std::move(ticket)),
        [&run](const std::exception_ptr& e) {
            run.ended = true;
            run.error = e;
        });
}

// Closes the gate (shutdown) and runs until the drained callback; returns whether it came.
bool shut_down(Rig& rig) {
    bool drained = false;
    rig.s->connections->close([&drained] { drained = true; });
    rig.settle();
    return drained;
}

constexpr std::size_t MAX_FAIL_POINTS = 400;

TEST(HttpSession, EveryFailPointEndsTheSessionCleanly) {
    Rig rig;

    struct Row {
        std::string request;
        std::string answer_has; // in the response of a successful run
    };

    const std::vector<Row> rows{
        {"GET /v1/seats/" + rig.seat + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
         "\"id\":\"" + rig.seat},
        {"GET /v1/seats/" + rig.seat
             + "/history?turns=0 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
         "from 1 to 20"},
        {"POST /v1/seats HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"
             + std::string(100, 'a'),
         "413 Payload Too Large"},
        {"\x01\x02 garbage\r\n\r\n", "malformed HTTP request"},
        {"GET /v1/nothing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
         "no such route: /v1/nothing"},
    };
    for (const auto& row : rows) {
        bool succeeded = false;
        std::size_t n = 0;
        for (; n < MAX_FAIL_POINTS && !succeeded; ++n) {
            rig.new_gate();
            beast::test::fail_count fc(n);
            beast::test::stream ss(rig.io, fc);
            beast::test::stream client(rig.io);
            ss.connect(client);
            ss.read_size(7); // many small reads: many fail points
            ss.write_size(32);
            ss.append(row.request);
            SessionEnd run;
            spawn_session(rig, std::move(ss), run);
            rig.settle();
            ASSERT_TRUE(run.ended) << row.request << " at fail point " << n;
            EXPECT_FALSE(run.error) << row.request << " at fail point " << n;
            EXPECT_EQ(rig.s->connections->open(), 0U) << row.request << " at fail point " << n;
            succeeded = client.str().find(row.answer_has) != std::string::npos;
        }
        EXPECT_TRUE(succeeded) << row.request;
        EXPECT_GT(n, 3U) << row.request; // the matrix really failed some operations first
    }
}

TEST(HttpSession, AnIdleKeepAliveConnectionEndsAtShutdown) {
    Rig rig;
    beast::test::stream ss(rig.io);
    beast::test::stream client(rig.io);
    ss.connect(client);
    ss.append("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    SessionEnd run;
    spawn_session(rig, std::move(ss), run);
    rig.settle();
    EXPECT_FALSE(run.ended); // answered, and waiting for the next request
    EXPECT_NE(client.str().find("\r\n\r\nok"), std::string::npos);
    EXPECT_EQ(rig.s->connections->open(), 1U);
    EXPECT_TRUE(shut_down(rig));
    EXPECT_TRUE(run.ended);
    EXPECT_FALSE(run.error);
    EXPECT_EQ(rig.s->connections->open(), 0U);
}

TEST(SseStream, EveryFailPointEndsTheStreamAndDetachesTheSubscriber) {
    Rig rig;
    const std::string request =
        "GET /v1/seats/" + rig.seat + "/events HTTP/1.1\r\nHost: localhost\r\n\r\n";
    bool succeeded = false;
    std::size_t n = 0;
    for (; n < MAX_FAIL_POINTS && !succeeded; ++n) {
        rig.new_gate();
        beast::test::fail_count fc(n);
        beast::test::stream ss(rig.io, fc);
        beast::test::stream client(rig.io);
        ss.connect(client);
        ss.read_size(9);
        ss.write_size(64);
        ss.append(request);
        SessionEnd run;
        spawn_session(rig, std::move(ss), run);
        rig.settle();
        // The HTTP session hands a stream its connection and ends; the stream holds the place.
        if (rig.s->connections->open() != 0) {
            EXPECT_EQ(rig.hub->stats().subscribers, 1U) << "fail point " << n;
            EXPECT_TRUE(shut_down(rig)) << "fail point " << n; // a live stream ends at shutdown
        }
        ASSERT_TRUE(run.ended) << "fail point " << n;
        EXPECT_FALSE(run.error) << "fail point " << n;
        EXPECT_EQ(rig.s->connections->open(), 0U) << "fail point " << n;
        EXPECT_EQ(rig.hub->stats().subscribers, 0U) << "fail point " << n;
        const auto got = client.str();
        succeeded = got.find("event: connected") != std::string::npos
                    && got.find(": bye: the server is shutting down\n\n") != std::string::npos;
    }
    EXPECT_TRUE(succeeded);
    EXPECT_GT(n, 3U);
}

// A session asking for the rig's seat's events over a pipe whose other end is `client`, run
// until it waits.
void subscribe_sse(Rig& rig, beast::test::stream& client, SessionEnd& run) {
    beast::test::stream ss(rig.io);
    ss.connect(client);
    ss.append("GET /v1/seats/" + rig.seat + "/events HTTP/1.1\r\nHost: localhost\r\n\r\n");
    spawn_session(rig, std::move(ss), run);
    rig.settle();
}

// The client goes: the stream ends cleanly, gives back its connection and detaches.
void client_goes(Rig& rig, beast::test::stream& client, const SessionEnd& run) {
    client.close();
    rig.settle();
    EXPECT_TRUE(run.ended);
    EXPECT_FALSE(run.error);
    EXPECT_EQ(rig.s->connections->open(), 0U);
    EXPECT_EQ(rig.hub->stats().subscribers, 0U);
}

TEST(SseStream, EndsWhenTheClientGoes) {
    Rig rig;
    beast::test::stream client(rig.io);
    SessionEnd run;
    subscribe_sse(rig, client, run);
    ASSERT_EQ(rig.s->connections->open(), 1U); // the stream holds the connection's place
    EXPECT_EQ(rig.hub->stats().subscribers, 1U);
    EXPECT_NE(client.str().find("event: connected"), std::string::npos);
    client_goes(rig, client, run);
}

std::size_t count_of(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

// The heartbeat's timer is armed lazily (once per wait, checked on expiry, not re-armed for
// every frame): an idle stream still gets one every interval, and again after frames.
TEST(SseStream, AnIdleStreamGetsAHeartbeatEveryIntervalAlsoAfterFrames) {
    Rig rig(100ms);
    beast::test::stream client(rig.io);
    SessionEnd run;
    subscribe_sse(rig, client, run);
    ASSERT_NE(client.str().find("event: connected"), std::string::npos);
    EXPECT_EQ(count_of(client.str(), hub::wire::SSE_HEARTBEAT), 0U);

    rig.io.restart();
    rig.io.run_for(450ms);
    const auto idle = count_of(client.str(), hub::wire::SSE_HEARTBEAT);
    EXPECT_GE(idle, 2U); // at about 100, 200, 300, 400 ms (a slow sanitizer run may miss some)
    EXPECT_LE(idle, 5U);

    // A frame (the prompt's row) goes out at once, and the heartbeats go on after it.
    auto seat = rig.hub->find(rig.seat);
    ASSERT_TRUE(seat);
    net::post(seat->strand(), [seat] { EXPECT_TRUE(seat->submit("a prompt to deliver")); });
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (client.str().find("a prompt to deliver") == std::string::npos
           && std::chrono::steady_clock::now() < deadline) {
        rig.io.restart();
        rig.io.run_for(5ms);
    }
    ASSERT_NE(client.str().find("a prompt to deliver"), std::string::npos);
    const auto before = count_of(client.str(), hub::wire::SSE_HEARTBEAT);
    rig.io.restart();
    rig.io.run_for(450ms);
    EXPECT_GE(count_of(client.str(), hub::wire::SSE_HEARTBEAT), before + 2);

    client_goes(rig, client, run);
}

// A WebSocket client on the other end of the pipe: handshakes, then reads until the end.
struct WsClientResult {
    bool handshook{false};
    std::vector<std::string> messages;
    boost::system::error_code end;
    websocket::close_reason reason;
};

net::awaitable<void>
ws_client(websocket::stream<beast::test::stream>& ws, std::string target, WsClientResult& out) {
    using net::as_tuple;
    using net::use_awaitable;
    auto [hec] = co_await ws.async_handshake("localhost", target, as_tuple(use_awaitable));
    if (hec) {
        out.end = hec;
        co_return;
    }
    out.handshook = true;
    for (;;) {
        beast::flat_buffer buf;
        auto [ec, n] = co_await ws.async_read(buf, as_tuple(use_awaitable));
        if (ec) {
            out.end = ec;
            out.reason = ws.reason();
            co_return;
        }
        out.messages.push_back(beast::buffers_to_string(buf.data()));
    }
}

TEST(WebSocketSession, EveryFailPointEndsTheSessionAndDetachesTheSubscriber) {
    Rig rig;
    bool succeeded = false;
    std::size_t n = 0;
    for (; n < MAX_FAIL_POINTS && !succeeded; ++n) {
        rig.new_gate();
        beast::test::fail_count fc(n);
        beast::test::stream ss(rig.io, fc);
        websocket::stream<beast::test::stream> client(rig.io);
        ss.connect(client.next_layer());
        ss.write_size(64);
        SessionEnd run;
        spawn_session(rig, std::move(ss), run);
        WsClientResult got;
        bool client_done = false;
        net::co_spawn(
            rig.io,
            ws_client(client, "/v1/seats/" + rig.seat + "/ws", got),
            [&](const std::exception_ptr&) { client_done = true; });
        rig.settle();
        if (!run.ended) {
            EXPECT_EQ(rig.hub->stats().subscribers, 1U) << "fail point " << n;
            EXPECT_TRUE(shut_down(rig)) << "fail point " << n;
        }
        ASSERT_TRUE(run.ended) << "fail point " << n;
        EXPECT_FALSE(run.error) << "fail point " << n;
        EXPECT_EQ(rig.s->connections->open(), 0U) << "fail point " << n;
        EXPECT_EQ(rig.hub->stats().subscribers, 0U) << "fail point " << n;
        if (!client_done) {
            client.next_layer().close(); // the server end is gone; end the client's read
            rig.settle();
        }
        EXPECT_TRUE(client_done) << "fail point " << n;
        const bool saw_connected =
            !got.messages.empty()
            && got.messages.front().find(R"("event":"connected")") != std::string::npos;
        succeeded = saw_connected && got.end == websocket::error::closed
                    && got.reason.code == websocket::close_code::going_away
                    && got.reason.reason == "the server is shutting down";
    }
    EXPECT_TRUE(succeeded);
    EXPECT_GT(n, 3U);
}

} // namespace

namespace {

TEST(WebSocketOps, RefusalsNameTheFieldAndTheLimit) {
    Rig rig;
    auto seat = rig.hub->find(rig.seat);
    ASSERT_TRUE(seat);

    struct Row {
        const char* message;
        const char* answer_has;
    };

    const Row rows[] = {
        {"not json", "a message must be a JSON object with a string 'op'"},
        {R"({"op":7})", "string 'op'"},
        {R"({"op":"fly"})", "unknown op 'fly'"},
        {R"({"op":"send"})", "field 'text'"},
        {R"({"op":"send","text":5})", "field 'text' must be a string"},
        {R"({"op":"send","text":""})", "must not be empty"},
        {R"({"op":"more","turns":0})", "from 1 to 20"},
        {R"({"op":"more","turns":21})", "from 1 to 20"},
        {R"({"op":"more","before":-1})", "'before'"},
        {R"({"op":"more","before":1.5})", "'before'"},
        {R"({"op":"more","before":1e30})", "'before'"},
        {R"({"op":"more","turns":2.5})", "from 1 to 20"},
        {R"({"op":"more"})", R"("event":"history")"},
        {R"({"op":"cancel"})", R"("cancelled":false)"},
    };
    for (const auto& r : rows) {
        std::string answer;
        net::post(seat->strand(), [&] {
            server::stream_detail::ws_answer(
                *seat, r.message, false, [&](const server::stream_detail::WsReply& reply) {
                    answer = reply.text();
                });
        });
        rig.settle();
        EXPECT_NE(answer.find(r.answer_has), std::string::npos) << r.message << " -> " << answer;
        if (std::string_view(r.answer_has).find("event") == std::string_view::npos
            && std::string_view(r.answer_has).find("cancelled") == std::string_view::npos) {
            EXPECT_NE(answer.find(R"("code":"bad_request")"), std::string::npos) << answer;
        }
    }
}

// A forwarder that records what a mirror asks of its owner and answers as its row says, at
// once (the reply still reaches the socket through the seat's strand).
class ScriptedForwarder final : public hub::Forwarder {
public:
    void
    forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done) override {
        owners.push_back(owner);
        asked.push_back(std::move(req));
        done(status, body);
    }

    std::vector<std::string> owners;
    std::vector<hub::ForwardedRequest> asked;
    unsigned status{};
    std::string body;
};

TEST(WebSocketOps, AMirrorCarriesEachOpToTheOwnerAndSendsItsReplyAsItsOwnSocketWould) {
    net::io_context io;
    auto writer = std::make_shared<hub::Writer>(hub::WRITER_QUEUE_CAPACITY);
    hub::SeatSpec spec;
    spec.id = "s-m";
    spec.epoch = "e-one";
    auto seat = cluster::MirrorSource::open(
        io, spec, hub::SeatOptions{{}, nullptr, writer, 2, 20ms, Budget{}}, "node-a");
    auto fwd = std::make_shared<ScriptedForwarder>();
    namespace wire = hub::wire;

    struct Row {
        const char* message;
        bool read_only;
        const char* method; // "": not forwarded
        const char* target;
        const char* body;
        unsigned status;
        const char* answer;
        std::string reply;
    };

    const std::string page = R"({"turns":[],"cursor":null})";
    const Row rows[] = {
        {R"({"op":"send","text":"hi"})",
         false,
         "POST",
         "/v1/seats/s-m/messages",
         R"({"text":"hi"})",
         202,
         R"({"turn":3,"queued":true})",
         wire::ws_reply("sent", R"({"turn":3,"queued":true})")},
        {R"({"op":"cancel"})",
         false,
         "POST",
         "/v1/seats/s-m/cancel",
         "{}",
         200,
         R"({"cancelled":true})",
         wire::ws_reply("cancelled", R"({"cancelled":true})")},
        {R"({"op":"answer","request_id":"a/b c","behavior":"deny","message":"no"})",
         false,
         "POST",
         "/v1/seats/s-m/permissions/a%2Fb%20c",
         R"({"behavior":"deny","message":"no"})",
         200,
         R"({"resolved":"a/b c","behavior":"deny","by":"api"})",
         wire::ws_reply("answered", R"({"request_id":"a/b c","behavior":"deny","by":"api"})")},
        {R"({"op":"reset"})",
         false,
         "POST",
         "/v1/seats/s-m/reset",
         "{}",
         200,
         R"({"reset":true,"epoch":"e2","previous_epoch":"e1","archived":"transcript.e1.jsonl"})",
         wire::ws_reply(
             "reset", R"({"epoch":"e2","previous_epoch":"e1","archived":"transcript.e1.jsonl"})")},
        {R"({"op":"more","before":7,"turns":2})",
         true, // a viewer reads pages: from the owner too
         "GET",
         "/v1/seats/s-m/history?turns=2&before=7",
         "",
         200,
         page.c_str(),
         wire::ws_reply("history", page)},
        {R"({"op":"more"})",
         false,
         "GET",
         "/v1/seats/s-m/history?turns=20", // the default page
         "",
         200,
         page.c_str(),
         wire::ws_reply("history", page)},
        {R"({"op":"answer","request_id":"nope","behavior":"allow"})",
         false,
         "POST",
         "/v1/seats/s-m/permissions/nope",
         R"({"behavior":"allow"})",
         404,
         R"({"error":{"code":"not_found","message":"no such prompt"}})",
         wire::ws_error("not_found", "no such prompt")},
        {R"({"op":"cancel"})",
         false,
         "POST",
         "/v1/seats/s-m/cancel",
         "{}",
         0,
         "the owner node node-a is gone",
         wire::ws_error("unavailable", "the owner node node-a is gone")},
        {R"({"op":"cancel"})",
         false,
         "POST",
         "/v1/seats/s-m/cancel",
         "{}",
         502,
         "bad gateway",
         wire::ws_error(
             "internal", "the owner node's answer could not be read (status 502): bad gateway")},
        // Refused here, as on the owner's own socket: never forwarded.
        {R"({"op":"send"})", false, "", "", "", 0, "", ""},
        {R"({"op":"fly"})", false, "", "", "", 0, "", ""},
        {R"({"op":"cancel"})", true, "", "", "", 0, "", ""},
    };
    for (const auto& r : rows) {
        fwd->asked.clear();
        fwd->status = r.status;
        fwd->body = r.answer;
        std::string answer;
        net::post(seat->strand(), [&] {
            server::stream_detail::ws_answer(
                *seat,
                r.message,
                r.read_only,
                [&](const server::stream_detail::WsReply& reply) { answer = reply.text(); },
                fwd);
        });
        for (int i = 0; i < 100; ++i) { // every ready handler (a seat may hold a timer)
            io.restart();
            if (io.poll() == 0) {
                break;
            }
        }
        if (*r.method == '\0') {
            EXPECT_TRUE(fwd->asked.empty()) << r.message;
            EXPECT_NE(answer.find(R"("event":"error")"), std::string::npos) << answer;
            continue;
        }
        ASSERT_EQ(fwd->asked.size(), 1U) << r.message;
        EXPECT_EQ(fwd->owners.back(), "node-a");
        EXPECT_EQ(fwd->asked[0].method, r.method) << r.message;
        EXPECT_EQ(fwd->asked[0].target, r.target) << r.message;
        EXPECT_EQ(fwd->asked[0].body, r.body) << r.message;
        EXPECT_EQ(answer, r.reply) << r.message;
    }
    writer->drain();
}

} // namespace
