// End-to-end test of the hub's WebSocket: the same events as SSE, and the client's ops.
#include "support/hub_process.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <thread>

// Inside sluice::test: its helpers (`http`) and sluice's aliases (`net`, `websocket`) both
// resolve, the nearer first.
namespace sluice::test {
namespace {

namespace json = boost::json;

json::value read_message(websocket::stream<net::ip::tcp::socket>& ws) {
    boost::beast::flat_buffer buf;
    ws.read(buf);
    return json::parse(boost::beast::buffers_to_string(buf.data()));
}

// A new seat on `hub`, and a WebSocket on it (handshake done).
void connect_new_seat(const SluiceProcess& hub, websocket::stream<net::ip::tcp::socket>& ws) {
    auto created = http("POST", hub.base() + "/v1/seats", R"({"name":"ws"})");
    const std::string seat(created.json.at("seat").as_string());
    net::ip::tcp::endpoint ep(
        net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(hub.port()));
    ws.next_layer().connect(ep);
    ws.handshake("127.0.0.1", "/v1/seats/" + seat + "/ws");
}

TEST(HubWebSocket, CarriesTheSameEventsAndAnswersOps) {
    TempDir dir;
    SluiceProcess hub({"serve", "--listen", "127.0.0.1:0", "--data", dir.path(), "--pace", "0"});
    net::io_context io;
    websocket::stream<net::ip::tcp::socket> ws(io);
    connect_new_seat(hub, ws);

    auto first = read_message(ws);
    ASSERT_EQ(first.at("event").as_string(), "connected");
    EXPECT_FALSE(first.at("data").at("recovered").as_bool());

    ws.write(net::buffer(std::string(R"({"op":"send","text":"over the socket"})")));
    bool sent = false;
    bool ended = false;
    std::vector<std::int64_t> seqs;
    std::string first_prompt;
    for (int guard = 0; guard < 500 && !ended; ++guard) {
        auto m = read_message(ws);
        const std::string event(m.at("event").as_string());
        if (event == "sent") {
            sent = true;
            EXPECT_EQ(m.at("data").at("turn").to_number<int>(), 1);
        } else if (event == "frame") {
            seqs.push_back(m.at("data").at("seq").as_int64());
            EXPECT_EQ(
                m.at("id").as_string(),
                std::string(first.at("data").at("epoch").as_string()) + ":"
                    + std::to_string(seqs.back()));
            if (first_prompt.empty()) {
                first_prompt =
                    std::string(m.at("data").at("row").at("message").at("content").as_string());
            }
        } else if (event == "turn" && m.at("data").at("state").as_string() == "ended") {
            ended = true;
        }
    }
    EXPECT_TRUE(sent);
    ASSERT_TRUE(ended);
    ASSERT_GE(seqs.size(), 3U);
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        EXPECT_EQ(seqs[i], static_cast<std::int64_t>(i));
    }
    EXPECT_EQ(first_prompt, "over the socket");

    ws.write(net::buffer(std::string(R"({"op":"more","turns":1})")));
    auto page = read_message(ws);
    ASSERT_EQ(page.at("event").as_string(), "history");
    EXPECT_EQ(page.at("data").at("turns").as_array().size(), 1U);

    ws.write(net::buffer(std::string(R"({"op":"fly"})")));
    auto err = read_message(ws);
    EXPECT_EQ(err.at("event").as_string(), "error");
    ws.write(net::buffer(std::string("not json")));
    EXPECT_EQ(read_message(ws).at("event").as_string(), "error");

    ws.write(net::buffer(std::string(R"({"op":"cancel"})")));
    auto cancelled = read_message(ws);
    EXPECT_EQ(cancelled.at("event").as_string(), "cancelled");
    EXPECT_FALSE(cancelled.at("data").at("cancelled").as_bool()); // nothing was running

    // The conversation starts over under a new epoch: this socket gets the reply and the new
    // epoch's `connected` (in either order: the reply waits for the disk, the stream does not).
    ws.write(net::buffer(std::string(R"({"op":"reset","keep":true})")));
    EXPECT_EQ(read_message(ws).at("event").as_string(), "error");
    ws.write(net::buffer(std::string(R"({"op":"reset"})")));
    const std::string old_epoch(first.at("data").at("epoch").as_string());
    std::string replied_epoch;
    std::string connected_epoch;
    for (int guard = 0; guard < 50 && (replied_epoch.empty() || connected_epoch.empty()); ++guard) {
        auto m = read_message(ws);
        const std::string event(m.at("event").as_string());
        if (event == "reset") {
            EXPECT_EQ(m.at("data").at("previous_epoch").as_string(), old_epoch);
            replied_epoch = std::string(m.at("data").at("epoch").as_string());
        } else if (event == "connected") {
            EXPECT_FALSE(m.at("data").at("recovered").as_bool());
            connected_epoch = std::string(m.at("data").at("epoch").as_string());
        }
    }
    EXPECT_FALSE(replied_epoch.empty());
    EXPECT_NE(replied_epoch, old_epoch);
    EXPECT_EQ(connected_epoch, replied_epoch);
    ws.close(websocket::close_code::normal);
}

TEST(HubWebSocket, SigtermClosesTheSocketWithGoingAwayAndItsReason) {
    TempDir dir;
    SluiceProcess hub({"serve", "--listen", "127.0.0.1:0", "--data", dir.path(), "--pace", "0"});
    net::io_context io;
    websocket::stream<net::ip::tcp::socket> ws(io);
    connect_new_seat(hub, ws);
    ASSERT_EQ(read_message(ws).at("event").as_string(), "connected");

    // The hub waits (up to its grace deadline) for this client to answer the close, so the
    // close is read on another thread while the hub is told to stop.
    boost::system::error_code end;
    std::thread reader([&] {
        boost::beast::flat_buffer buf;
        for (;;) {
            ws.read(buf, end); // answers the close frame, then ends with `closed`
            if (end) {
                return;
            }
            buf.clear();
        }
    });
    const int status = hub.terminate(std::chrono::seconds(2));
    reader.join();
    EXPECT_EQ(status, 0);
    EXPECT_EQ(end, websocket::error::closed) << end.message();
    EXPECT_EQ(ws.reason().code, websocket::close_code::going_away);
    EXPECT_EQ(std::string(ws.reason().reason.c_str()), "the server is shutting down");
}

} // namespace
} // namespace sluice::test
