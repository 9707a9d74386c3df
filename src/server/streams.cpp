// Subscriber streams: the encoders, the WebSocket ops, and the instantiation for tcp_stream.
#include "streams_impl.hpp"

namespace sluice::server {

namespace stream_detail {

namespace json = boost::json;

void encode_sse(
    const std::vector<hub::OutEvent>& batch,
    std::vector<std::string>& heads,
    std::vector<net::const_buffer>& bufs) {
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

std::string ws_message(const hub::OutEvent& ev) {
    std::string m = R"({"event":")";
    m += hub::event_name(ev.kind);
    m += R"(","id":)";
    m += ev.id.empty() ? std::string("null") : json::serialize(json::value(ev.id));
    m += R"(,"data":)";
    if (ev.kind == hub::OutEvent::Kind::frame) {
        m += R"({"seq":)";
        m += std::to_string(ev.seq);
        m += R"(,"row":)";
        m += ev.frame->json();
        m += '}';
    } else {
        m += ev.json();
    }
    m += '}';
    return m;
}

namespace {

std::string ws_event(std::string_view event, json::value data) {
    return json::serialize(json::object{{"event", event}, {"id", nullptr}, {"data", std::move(data)}});
}

std::string ws_error(const boost::system::error_code& ec, std::string_view message) {
    return R"({"event":"error","id":null,"data":)" + error_body(ec, message) + "}";
}

std::string ws_refusal(const Refusal& r) {
    return ws_error(make_error_code(r.code), r.message);
}

} // namespace

std::string ws_answer(hub::Seat& seat, std::string_view message) {
    boost::system::error_code pec;
    auto v = json::parse(message, pec);
    const json::object* op = (!pec && v.is_object()) ? &v.get_object() : nullptr;
    const json::value* name = op != nullptr ? op->if_contains("op") : nullptr;
    if (name == nullptr || !name->is_string()) {
        return ws_refusal({errc::bad_request, "a message must be a JSON object with a string 'op'"});
    }
    if (name->get_string() == "send") {
        SendOp send;
        if (auto refused = validate_send(*op, send)) {
            return ws_refusal(*refused);
        }
        auto r = seat.submit(std::move(send.text));
        if (!r) {
            return ws_error(r.error(), submit_refusal(r.error()));
        }
        return ws_event("sent", json::object{{"turn", r->turn}, {"queued", r->queued}});
    }
    if (name->get_string() == "cancel") {
        return ws_event("cancelled", json::object{{"cancelled", seat.cancel()}});
    }
    if (name->get_string() == "more") {
        MoreOp more;
        if (auto refused = validate_more(op->if_contains("before"), op->if_contains("turns"), more)) {
            return ws_refusal(*refused);
        }
        auto page = seat.history(more.before, more.turns);
        if (!page) {
            return ws_error(page.error(), "cannot read that page: " + page.error().message());
        }
        return R"({"event":"history","id":null,"data":)" + page->json + "}";
    }
    return ws_refusal(
        {errc::bad_request,
         "unknown op '" + std::string(name->get_string().subview(0, 64)) + "' (send, cancel, more)"});
}

} // namespace stream_detail

template net::awaitable<void> serve_sse<beast::tcp_stream>(
    Server::Impl&, std::shared_ptr<hub::Seat>, beast::tcp_stream&, std::optional<std::string>, bool, Connections::Ticket&);

template net::awaitable<void> serve_websocket<beast::tcp_stream>(
    Server::Impl&, std::shared_ptr<hub::Seat>, beast::tcp_stream&, Request, Connections::Ticket&);

} // namespace sluice::server
