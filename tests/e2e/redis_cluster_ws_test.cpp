// End-to-end test of `sluice serve --redis` over WebSocket: a mirror's socket ops reach the owner.
#include "e2e/redis_cluster.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <optional>
#include <stdexcept>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`, `websocket`) both
// resolve, the nearer first.
namespace sluice::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using Ws = websocket::stream<net::ip::tcp::socket>;

// A WebSocket client on one seat of one node. Every read has a deadline, so a reply that never
// comes fails the test instead of hanging it.
class WsClient {
public:
    // Connects to `seat` at `hub` and reads past its `connected` (a mirror's comes once synced).
    WsClient(const SluiceProcess& hub, const std::string& seat) {
        ws_.next_layer().connect(
            {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port())});
        ws_.handshake("127.0.0.1", "/v1/seats/" + seat + "/ws");
        read_until("connected");
    }

    void write(const std::string& op) { ws_.write(net::buffer(op)); }

    // The next message. @throws when none comes within READ_DEADLINE or the socket fails.
    json::object read() {
        boost::beast::flat_buffer buf;
        std::optional<boost::system::error_code> ec;
        ws_.async_read(buf, [&ec](boost::system::error_code e, std::size_t) { ec = e; });
        io_.restart();
        io_.run_for(READ_DEADLINE);
        if (!ec) {
            ws_.next_layer().close(); // the read ends (aborted); the socket is done
            io_.restart();
            io_.run();
            throw std::runtime_error("no WebSocket message within the deadline");
        }
        if (*ec) {
            throw boost::system::system_error(*ec);
        }
        return json::parse(boost::beast::buffers_to_string(buf.data())).as_object();
    }

    // Reads until a message with event `event` (frames, previews and turn states pass by); a
    // reply to another op (an error, say) instead fails the test and is returned.
    json::object read_until(std::string_view event) {
        for (int guard = 0; guard < 2000; ++guard) {
            auto m = read();
            const auto& e = m.at("event").as_string();
            if (e == event) {
                return m;
            }
            for (const std::string_view reply :
                 {"error", "sent", "cancelled", "answered", "reset", "history"}) {
                if (e == reply) {
                    ADD_FAILURE() << "waiting for '" << event << "': " << json::serialize(m);
                    return m;
                }
            }
        }
        ADD_FAILURE() << "no '" << event << "' message";
        return {};
    }

private:
    static constexpr auto READ_DEADLINE = std::chrono::seconds(30);
    net::io_context io_;
    Ws ws_{io_};
};

json::object seat_info(const SluiceProcess& hub, const std::string& seat) {
    auto r = http("GET", hub.base() + "/v1/seats/" + seat);
    return r.status == 200U && r.json.is_object() ? r.json.as_object() : json::object{};
}

std::string str(const json::value& v) {
    return std::string(v.as_string());
}

TEST(RedisClusterWs, OpsOnAMirrorsSocketReachTheOwnerAndAnswerAsItsOwnWould) {
    SKIP_WITHOUT_REDIS();
    RedisProcess redis;
    TempDir da, db, scripts;
    // ~2.5 s at pace 1: time for a cancel sent on `sent` to find the turn running.
    const auto script = write_answer_script(scripts, answer_text(1600));
    // A window of 4 frames: after a few turns, pages below it are on the owner's disk only.
    const auto args = [&](const TempDir& d) {
        auto a = node_args(d, redis.url(), "1");
        a.insert(a.end(), {"--script", script, "--window-cap", "4"});
        return a;
    };
    std::optional<SluiceProcess> a(std::in_place, args(da));
    SluiceProcess b(args(db));
    const auto seat = new_seat(*a);
    ASSERT_TRUE(eventually([&] { return lists(b, seat); }));
    const auto base_a = a->base() + "/v1/seats/" + seat;

    // `send` on B's socket makes a turn on A: B's socket gets `sent` and the turn's frames.
    {
        WsClient ws(b, seat);
        ws.write(R"({"op":"send","text":"through B's socket"})");
        bool sent = false;
        bool ended = false;
        std::string prompt;
        for (int guard = 0; guard < 2000 && !ended; ++guard) {
            auto m = ws.read();
            const auto event = str(m.at("event"));
            const auto& data = m.at("data");
            if (event == "sent") {
                sent = true;
                EXPECT_EQ(data.at("turn").to_number<int>(), 1);
                EXPECT_FALSE(data.at("queued").as_bool());
            } else if (event == "frame" && prompt.empty()) {
                prompt = str(data.at("row").at("message").at("content"));
            } else if (event == "error") {
                FAIL() << json::serialize(m);
            } else if (event == "turn" && data.at("state").as_string() == "ended") {
                ended = data.at("turn").to_number<int>() == 1;
            }
        }
        EXPECT_TRUE(sent);
        ASSERT_TRUE(ended);
        EXPECT_EQ(prompt, "through B's socket");
        auto page = http("GET", base_a + "/history?turns=1");
        EXPECT_NE(page.body.find("through B's socket"), std::string::npos) << page.body;

        // `cancel` reaches A: the turn running there is cancelled.
        ws.write(R"({"op":"send","text":"to be cancelled"})");
        auto sent2 = ws.read_until("sent");
        ASSERT_EQ(sent2.at("data").at("turn").to_number<int>(), 2);
        ws.write(R"({"op":"cancel"})");
        auto cancelled = ws.read_until("cancelled");
        EXPECT_TRUE(cancelled.at("data").at("cancelled").as_bool()) << json::serialize(cancelled);
        ASSERT_TRUE(eventually([&] {
            auto info = seat_info(*a, seat);
            return info.contains("state") && info.at("state").as_string() == "idle";
        }));
    }
    const auto t3 = send(*a, seat, "a third turn");
    ASSERT_TRUE(eventually([&] {
        auto info = seat_info(*a, seat);
        return info.contains("state") && info.at("state").as_string() == "idle"
               && info.at("turns").to_number<std::uint64_t>() >= t3;
    }));

    // `more` below B's window: A's own page, as A's socket would send it.
    std::int64_t first = 0;
    ASSERT_TRUE(eventually([&] {
        auto on_a = seat_info(*a, seat);
        auto on_b = seat_info(b, seat);
        if (!on_a.contains("window") || !on_b.contains("window")) {
            return false;
        }
        first = on_a.at("window").at("first").as_int64();
        return first > 0 && on_b.at("window").at("first").as_int64() == first;
    }));
    WsClient ws(b, seat);
    const auto q = "/history?turns=1&before=" + std::to_string(first);
    auto from_a = http("GET", base_a + q);
    ASSERT_EQ(from_a.status, 200U) << from_a.body;
    ASSERT_FALSE(from_a.json.at("turns").as_array().empty()) << from_a.body;
    ws.write(R"({"op":"more","turns":1,"before":)" + std::to_string(first) + "}");
    auto page = ws.read_until("history");
    EXPECT_EQ(json::serialize(page.at("data")), json::serialize(from_a.json));

    // The owner's refusal is the error its own socket would send (not a mirror's conflict).
    auto refused_a =
        http("POST", base_a + "/permissions/no-such-request", R"({"behavior":"allow"})");
    ASSERT_GE(refused_a.status, 400U) << refused_a.body;
    ws.write(R"({"op":"answer","request_id":"no-such-request","behavior":"allow"})");
    auto refused = ws.read_until("error");
    EXPECT_EQ(
        json::serialize(refused.at("data").at("error")),
        json::serialize(refused_a.json.at("error")));

    // `reset` on B's socket starts A's conversation over.
    const auto epoch = str(seat_info(*a, seat).at("epoch"));
    ws.write(R"({"op":"reset"})");
    auto reset = ws.read_until("reset");
    EXPECT_EQ(str(reset.at("data").at("previous_epoch")), epoch);
    EXPECT_EQ(str(reset.at("data").at("epoch")), str(seat_info(*a, seat).at("epoch")));
    EXPECT_NE(str(reset.at("data").at("epoch")), epoch);

    // The owner killed: an op is answered `unavailable` with why; validation stays B's own.
    ::kill(a->pid(), SIGKILL);
    a->wait(10s);
    a.reset();
    ws.write(R"({"op":"cancel"})");
    auto gone = ws.read_until("error");
    EXPECT_EQ(str(gone.at("data").at("error").at("code")), "unavailable") << json::serialize(gone);
    EXPECT_FALSE(gone.at("data").at("error").at("message").as_string().empty());
    ws.write(R"({"op":"send"})");
    auto bad = ws.read_until("error");
    EXPECT_EQ(str(bad.at("data").at("error").at("code")), "bad_request") << json::serialize(bad);
}

} // namespace
} // namespace sluice::test
