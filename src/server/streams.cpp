// Subscriber streams: SSE (EventSource-compatible) and WebSocket, both on the seat's strand.
#include "impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/url/parse.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

namespace sluice::server {

namespace {

using net::as_tuple;
using net::use_awaitable;
using net::experimental::awaitable_operators::operator||;
namespace json = boost::json;
namespace websocket = beast::websocket;

// Holds the subscriber attached for the life of a stream and detaches it on every exit path.
class Attachment {
public:
    Attachment(std::shared_ptr<hub::Seat> seat, std::shared_ptr<hub::Subscriber> sub)
        : seat_(std::move(seat)), sub_(std::move(sub)) {}
    ~Attachment() {
        sub_->set_wake(nullptr);
        seat_->detach(sub_);
    }
    Attachment(const Attachment&) = delete;
    Attachment& operator=(const Attachment&) = delete;

private:
    std::shared_ptr<hub::Seat> seat_;
    std::shared_ptr<hub::Subscriber> sub_;
};

// Encodes a batch as SSE into `heads` (owned text) and `bufs` (gathered, frames not copied).
void encode_sse(
    const std::vector<hub::OutEvent>& batch, std::vector<std::string>& heads, std::vector<net::const_buffer>& bufs) {
    heads.clear();
    bufs.clear();
    heads.reserve(batch.size() * 2);
    for (const auto& ev : batch) {
        std::string head;
        if (!ev.id.empty()) {
            head += "id: ";
            head += ev.id;
            head += '\n';
        }
        head += "event: ";
        head += hub::event_name(ev.kind);
        head += "\ndata: ";
        if (ev.kind == hub::OutEvent::Kind::frame) {
            head += R"({"seq":)";
            head += std::to_string(ev.seq);
            head += R"(,"row":)";
            heads.push_back(std::move(head));
            heads.emplace_back("}\n\n");
        } else {
            if (ev.shared) {
                heads.push_back(std::move(head)); // the shared page is gathered, not copied
                heads.emplace_back("\n\n");
            } else {
                head += ev.data;
                head += "\n\n";
                heads.push_back(std::move(head));
            }
        }
    }
    std::size_t h = 0;
    for (const auto& ev : batch) {
        bufs.push_back(net::buffer(heads[h++]));
        if (ev.kind == hub::OutEvent::Kind::frame) {
            bufs.push_back(net::buffer(ev.frame->json().data(), ev.frame->json().size()));
            bufs.push_back(net::buffer(heads[h++]));
        } else if (ev.shared) {
            bufs.push_back(net::buffer(ev.shared->data(), ev.shared->size()));
            bufs.push_back(net::buffer(heads[h++]));
        }
    }
}

net::awaitable<void> sse_writer(
    Server::Impl& s, hub::Seat& seat, hub::Subscriber& sub, beast::tcp_stream& stream, net::steady_timer& wake) {
    std::vector<hub::OutEvent> batch;
    std::vector<std::string> heads;
    std::vector<net::const_buffer> bufs;
    static constexpr std::string_view heartbeat = ": heartbeat\n\n";
    for (;;) {
        if (seat.closed()) {
            co_return;
        }
        batch.clear();
        seat.collect(sub, batch);
        if (batch.empty()) {
            wake.expires_after(s.cfg.heartbeat);
            auto [ec] = co_await wake.async_wait(as_tuple(use_awaitable));
            if (!ec) {
                auto [wec, n] = co_await net::async_write(stream, net::buffer(heartbeat), as_tuple(use_awaitable));
                if (wec) {
                    co_return;
                }
            }
            continue;
        }
        encode_sse(batch, heads, bufs);
        auto [ec, n] = co_await net::async_write(stream, bufs, as_tuple(use_awaitable));
        if (ec) {
            co_return;
        }
    }
}

// Completes when the peer closes (or sends anything we do not expect on an SSE stream).
net::awaitable<void> wait_for_close(beast::tcp_stream& stream) {
    std::array<char, 64> sink{}; // an SSE client sends nothing; this only notices the close
    for (;;) {
        auto [ec, n] = co_await stream.socket().async_read_some(net::buffer(sink), as_tuple(use_awaitable));
        if (ec) {
            co_return;
        }
    }
}

net::awaitable<void> sse_on_strand(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    beast::tcp_stream& stream,
    std::optional<std::string> last,
    bool cancel_on_disconnect) {
    static constexpr std::string_view head =
        "HTTP/1.1 200 OK\r\n"
        "Server: sluice\r\n"
        "Content-Type: text/event-stream; charset=utf-8\r\n"
        "Cache-Control: no-store\r\n"
        "X-Accel-Buffering: no\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "retry: 1000\n\n";
    auto [ec, n] = co_await net::async_write(stream, net::buffer(head), as_tuple(use_awaitable));
    if (ec) {
        co_return;
    }
    auto ex = co_await net::this_coro::executor;
    net::steady_timer wake(ex);
    auto sub = std::make_shared<hub::Subscriber>(cancel_on_disconnect);
    sub->set_wake([&wake] { wake.cancel(); });
    seat->attach(sub, std::move(last));
    Attachment attached(seat, sub);
    co_await (sse_writer(s, *seat, *sub, stream, wake) || wait_for_close(stream));
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

// ---- WebSocket -------------------------------------------------------------------------------

struct WsState {
    std::deque<std::string> replies; // answers to client ops, bounded
};

constexpr std::size_t WS_MAX_REPLIES = 16;
constexpr std::size_t WS_MAX_MESSAGE = 64 * 1024;

net::awaitable<void> ws_writer(
    Server::Impl& s,
    hub::Seat& seat,
    hub::Subscriber& sub,
    websocket::stream<beast::tcp_stream>& ws,
    net::steady_timer& wake,
    WsState& st) {
    std::vector<hub::OutEvent> batch;
    for (;;) {
        if (seat.closed()) {
            co_await ws.async_close(websocket::close_code::going_away, as_tuple(use_awaitable));
            co_return;
        }
        while (!st.replies.empty()) {
            std::string m = std::move(st.replies.front());
            st.replies.pop_front();
            auto [ec, n] = co_await ws.async_write(net::buffer(m), as_tuple(use_awaitable));
            if (ec) {
                co_return;
            }
        }
        batch.clear();
        seat.collect(sub, batch);
        if (batch.empty()) {
            wake.expires_after(s.cfg.heartbeat);
            auto [ec] = co_await wake.async_wait(as_tuple(use_awaitable));
            if (!ec) {
                auto [pec] = co_await ws.async_ping({}, as_tuple(use_awaitable));
                if (pec) {
                    co_return;
                }
            }
            continue;
        }
        for (const auto& ev : batch) {
            const std::string m = hub::wire::ws_message(ev);
            auto [ec, n] = co_await ws.async_write(net::buffer(m), as_tuple(use_awaitable));
            if (ec) {
                co_return;
            }
        }
    }
}

std::string ws_error(std::string_view code, std::string_view message) {
    return json::serialize(json::object{
        {"event", "error"}, {"id", nullptr}, {"data", json::object{{"error", json::object{{"code", code}, {"message", message}}}}}});
}

net::awaitable<void> ws_reader(
    hub::Seat& seat, websocket::stream<beast::tcp_stream>& ws, net::steady_timer& wake, WsState& st) {
    beast::flat_buffer buf;
    for (;;) {
        buf.clear();
        auto [ec, n] = co_await ws.async_read(buf, as_tuple(use_awaitable));
        if (ec) {
            co_return;
        }
        std::string reply;
        boost::system::error_code pec;
        auto v = json::parse(beast::buffers_to_string(buf.data()), pec);
        const json::object* op = (!pec && v.is_object()) ? &v.get_object() : nullptr;
        const json::value* name = op != nullptr ? op->if_contains("op") : nullptr;
        if (name == nullptr || !name->is_string()) {
            reply = ws_error("bad_request", "a message must be a JSON object with a string 'op'");
        } else if (name->get_string() == "send") {
            const auto* text = op->if_contains("text");
            if (text == nullptr || !text->is_string() || text->get_string().empty()) {
                reply = ws_error("bad_request", "'send' needs a non-empty string 'text'");
            } else if (auto r = seat.submit(std::string(text->get_string())); r) {
                reply = json::serialize(json::object{
                    {"event", "sent"}, {"id", nullptr}, {"data", json::object{{"turn", r->turn}, {"queued", r->queued}}}});
            } else {
                reply = ws_error(hub::wire::error_code_name(r.error().code), r.error().message);
            }
        } else if (name->get_string() == "cancel") {
            const bool was = seat.cancel();
            reply = json::serialize(json::object{{"event", "cancelled"}, {"id", nullptr}, {"data", json::object{{"cancelled", was}}}});
        } else if (name->get_string() == "more") {
            std::optional<std::uint64_t> before;
            std::size_t turns = 20;
            const auto* b = op->if_contains("before");
            const auto* t = op->if_contains("turns");
            bool ok = true;
            if (b != nullptr && !b->is_null()) {
                ok = b->is_number() && b->to_number<double>() >= 0;
                if (ok) {
                    before = b->to_number<std::uint64_t>();
                }
            }
            if (ok && t != nullptr && !t->is_null()) {
                ok = t->is_int64() && t->get_int64() >= 1 && t->get_int64() <= 20;
                if (ok) {
                    turns = static_cast<std::size_t>(t->get_int64());
                }
            }
            if (!ok) {
                reply = ws_error("bad_request", "'more' takes 'before' (a position) and 'turns' (1..20)");
            } else if (auto page = seat.history(before, turns); page) {
                reply = R"({"event":"history","id":null,"data":)" + page->json + "}";
            } else {
                reply = ws_error(hub::wire::error_code_name(page.error().code), page.error().message);
            }
        } else {
            reply = ws_error("bad_request", "unknown op");
        }
        if (st.replies.size() >= WS_MAX_REPLIES) {
            co_return; // a client that floods ops and never reads is dropped
        }
        st.replies.push_back(std::move(reply));
        wake.cancel();
    }
}

net::awaitable<void> ws_on_strand(
    Server::Impl& s, std::shared_ptr<hub::Seat> seat, beast::tcp_stream& stream, Request req) {
    websocket::stream<beast::tcp_stream> ws(std::move(stream));
    ws.read_message_max(WS_MAX_MESSAGE);
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    auto [aec] = co_await ws.async_accept(req, as_tuple(use_awaitable));
    if (aec) {
        co_return;
    }
    auto ex = co_await net::this_coro::executor;
    net::steady_timer wake(ex);
    WsState st;
    auto sub = std::make_shared<hub::Subscriber>(false);
    sub->set_wake([&wake] { wake.cancel(); });
    std::optional<std::string> last;
    if (auto h = req["Last-Event-ID"]; !h.empty()) {
        last = std::string(h);
    } else if (auto url = boost::urls::parse_origin_form(req.target()); url) {
        last = query_param(*url, "last_event_id");
    }
    seat->attach(sub, std::move(last));
    Attachment attached(seat, sub);
    co_await (ws_writer(s, *seat, *sub, ws, wake, st) || ws_reader(*seat, ws, wake, st));
}

} // namespace

net::awaitable<void> serve_sse(
    Server::Impl& s,
    std::shared_ptr<hub::Seat> seat,
    beast::tcp_stream& stream,
    std::optional<std::string> last_event_id,
    bool cancel_on_disconnect) {
    auto strand = seat->strand();
    co_await net::co_spawn(
        strand,
        sse_on_strand(s, std::move(seat), stream, std::move(last_event_id), cancel_on_disconnect),
        use_awaitable);
}

net::awaitable<void> serve_websocket(
    Server::Impl& s, std::shared_ptr<hub::Seat> seat, beast::tcp_stream& stream, Request req) {
    auto strand = seat->strand();
    co_await net::co_spawn(strand, ws_on_strand(s, std::move(seat), stream, std::move(req)), use_awaitable);
}

} // namespace sluice::server
