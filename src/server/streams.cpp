// Subscriber streams: the encoders, the WebSocket ops, and the instantiation for tcp_stream.
#include "streams_impl.hpp"

namespace sluice::server::stream_detail {

namespace json = boost::json;

Subscription::Subscription(
    std::shared_ptr<hub::Seat> seat,
    net::any_io_executor ex,
    Connections::Ticket& ticket,
    SubscribeOptions opt)
    : seat_(std::move(seat))
    , ctl_(std::make_shared<StreamControl>(std::move(ex)))
    , sub_(std::make_shared<hub::Subscriber>(opt.cancel_on_disconnect)) {
    // At shutdown: post to the seat strand, mark the stream as ending, wake its writer.
    ticket.on_stop([strand = seat_->strand(), weak = std::weak_ptr<StreamControl>(ctl_)] {
        net::post(strand, [weak] {
            if (auto c = weak.lock()) {
                c->stop = true;
                c->wake.cancel();
            }
        });
    });
    sub_->set_wake([c = ctl_.get()] { c->wake.cancel(); });
    seat_->attach(sub_, std::move(opt.last_event_id));
}

Subscription::~Subscription() {
    sub_->set_wake(nullptr);
    seat_->detach(sub_);
}

bool Batches::next(
    Server::Impl& s,
    hub::Seat& seat,
    hub::Subscriber& sub,
    const StreamControl& ctl,
    std::vector<hub::OutEvent>& batch) {
    const bool ending = ctl.stop || seat.closed();
    batch.clear();
    if (ending && end_batches_ >= END_DRAIN_BATCHES) {
        return true; // a seat still publishing cannot hold the end open
    }
    s.note_lane_level(sub);
    seat.collect(sub, batch);
    s.note_gaps(sub, gap_seen_);
    if (ending && !batch.empty()) {
        ++end_batches_;
    }
    return ending;
}

void encode_sse(
    const std::vector<hub::OutEvent>& batch,
    std::vector<std::string>& heads,
    std::vector<net::const_buffer>& bufs) {
    heads.clear();
    bufs.clear();
    heads.reserve(batch.size()); // no reallocation below: the buffers point into these strings
    std::vector<hub::wire::SsePieces> pieces;
    pieces.reserve(batch.size());
    for (const auto& ev : batch) {
        pieces.push_back(hub::wire::sse_pieces(ev));
        heads.push_back(std::move(pieces.back().head));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        bufs.emplace_back(net::buffer(heads[i]));
        if (!pieces[i].body.empty()) {
            bufs.push_back(net::buffer(pieces[i].body.data(), pieces[i].body.size())); // gathered
        }
        bufs.push_back(net::buffer(pieces[i].tail.data(), pieces[i].tail.size()));
    }
}

namespace {

std::string ws_event(std::string_view event, const json::object& data) {
    return hub::wire::ws_reply(event, json::serialize(data));
}

std::string ws_error(const boost::system::error_code& ec, std::string_view message) {
    return hub::wire::ws_error(hub::wire::error_code_name(ec), message);
}

std::string ws_refusal(const Refusal& r) {
    return ws_error(r.code, r.message);
}

} // namespace

std::string ws_answer(hub::Seat& seat, std::string_view message) {
    boost::system::error_code pec;
    auto v = json::parse(message, pec);
    const json::object* op = (!pec && v.is_object()) ? &v.get_object() : nullptr;
    const json::value* name = op != nullptr ? op->if_contains("op") : nullptr;
    if (name == nullptr || !name->is_string()) {
        return ws_refusal(
            Refusal::of(errc::bad_request, "a message must be a JSON object with a string 'op'"));
    }
    if (name->get_string() == "send") {
        SendOp send;
        if (auto refused = validate_send(*op, send)) {
            return ws_refusal(*refused);
        }
        auto r = seat.submit(std::move(send.text));
        if (!r) {
            return ws_refusal(r.error());
        }
        return ws_event("sent", json::object{{"turn", r->turn}, {"queued", r->queued}});
    }
    if (name->get_string() == "cancel") {
        return ws_event("cancelled", json::object{{"cancelled", seat.cancel()}});
    }
    if (name->get_string() == "more") {
        MoreOp more;
        if (auto refused =
                validate_more(op->if_contains("before"), op->if_contains("turns"), more)) {
            return ws_refusal(*refused);
        }
        auto page = seat.history(more.before, more.turns);
        if (!page) {
            return ws_refusal(page.error());
        }
        return hub::wire::ws_reply("history", page->json);
    }
    return ws_refusal(Refusal::of(
        errc::bad_request,
        "unknown op '" + std::string(name->get_string().subview(0, 64))
            + "' (send, cancel, more)"));
}

} // namespace sluice::server::stream_detail

namespace sluice::server {

template net::awaitable<void> serve_sse<beast::tcp_stream>(
    Server::Impl&,
    std::shared_ptr<hub::Seat>,
    beast::tcp_stream&,
    std::optional<std::string>,
    bool,
    Connections::Ticket&);

template net::awaitable<void> serve_websocket<beast::tcp_stream>(
    Server::Impl&, std::shared_ptr<hub::Seat>, beast::tcp_stream&, Request, Connections::Ticket&);

} // namespace sluice::server
