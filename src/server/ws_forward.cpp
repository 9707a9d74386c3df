// A mirror's WebSocket ops carried to the seat's owner node, and the owner's answers as replies.
#include "impl.hpp"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <initializer_list>
#include <utility>

namespace sluice::server::stream_detail {

namespace json = boost::json;

namespace {

using Kind = WsForwardOp::Kind;

WsReply plain(std::string text) {
    WsReply r;
    r.pieces.head = std::move(text);
    return r;
}

// The owner answered something this node cannot read as its API's answer (a bug or a node of
// another version): said as an internal error, with what came.
WsReply unreadable(unsigned status, std::string_view body) {
    return plain(hub::wire::ws_error(
        "internal",
        "the owner node's answer could not be read (status " + std::to_string(status)
            + "): " + std::string(body.substr(0, 200))));
}

// The owner's refusal, `{"error":{"code","message"}}`: the error a local refusal sends.
WsReply refusal(unsigned status, const std::string& body) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    const json::object* err = nullptr;
    if (!ec && v.is_object()) {
        if (const auto* e = v.get_object().if_contains("error"); e != nullptr && e->is_object()) {
            err = &e->get_object();
        }
    }
    const json::value* code = err != nullptr ? err->if_contains("code") : nullptr;
    const json::value* message = err != nullptr ? err->if_contains("message") : nullptr;
    if (code == nullptr || !code->is_string() || message == nullptr || !message->is_string()) {
        return unreadable(status, body);
    }
    return plain(hub::wire::ws_error(code->get_string(), message->get_string()));
}

// The reply `event` with the owner's answer's fields `from` named `to` (its HTTP answer and
// the socket's reply carry the same values, a few under other names).
WsReply renamed(
    std::string_view event,
    unsigned status,
    const std::string& body,
    std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) {
        return unreadable(status, body);
    }
    json::object data;
    for (const auto& [from, to] : fields) {
        const auto* f = v.get_object().if_contains(from);
        if (f == nullptr) {
            return unreadable(status, body);
        }
        data[to] = *f;
    }
    return plain(hub::wire::ws_reply(event, json::serialize(data)));
}

} // namespace

WsReply ws_forwarded_reply(Kind kind, unsigned status, std::string body) {
    if (status == 0) {
        return plain(hub::wire::ws_error("unavailable", body)); // the owner is gone: why
    }
    if (status < 200 || status >= 300) {
        return refusal(status, body);
    }
    switch (kind) {
    case Kind::send:
        return renamed("sent", status, body, {{"turn", "turn"}, {"queued", "queued"}});
    case Kind::cancel:
        return renamed("cancelled", status, body, {{"cancelled", "cancelled"}});
    case Kind::answer:
        return renamed(
            "answered",
            status,
            body,
            {{"resolved", "request_id"}, {"behavior", "behavior"}, {"by", "by"}});
    case Kind::reset:
        return renamed(
            "reset",
            status,
            body,
            {{"epoch", "epoch"}, {"previous_epoch", "previous_epoch"}, {"archived", "archived"}});
    case Kind::more: {
        // The owner's page as its own socket sends it: `history` around the page, gathered.
        WsReply r;
        r.keep = std::make_shared<const std::string>(std::move(body));
        r.pieces = hub::wire::ws_reply_pieces("history", *r.keep);
        return r;
    }
    }
    return unreadable(status, body);
}

void ws_forward(hub::Forwarder& forwarder, hub::Seat& seat, WsForwardOp op, WsDone done) {
    // The forwarder answers on its own strand; the reply is built there and handed to `done`
    // on the seat's, where the socket's replies live (as a page read on the writer is).
    forwarder.forward(
        seat.owner(),
        std::move(op.req),
        [strand = seat.strand(), kind = op.kind, done = std::move(done)](
            unsigned status, std::string body) {
            net::post(
                strand,
                [done, reply = ws_forwarded_reply(kind, status, std::move(body))]() mutable {
                    done(std::move(reply));
                });
        });
}

} // namespace sluice::server::stream_detail
