// Subscriber streams' shared parts: the subscription, the batches, the encoders, the WebSocket ops.
#include "streams_impl.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/pchars.hpp>

namespace sluice::server::stream_detail {

namespace json = boost::json;

std::optional<std::string> last_event_id(const Request& req, const boost::urls::url_view& url) {
    if (auto h = req["Last-Event-ID"]; !h.empty()) {
        return std::string(h);
    }
    return query_param(url, "last_event_id");
}

Subscription::Subscription(
    std::shared_ptr<hub::Seat> seat,
    Connections::Ticket& ticket,
    SubscribeOptions opt,
    std::function<void()> on_wake)
    : seat_(std::move(seat))
    , ctl_(std::make_shared<StreamControl>())
    , sub_(std::make_shared<hub::Subscriber>(opt.cancel_on_disconnect)) {
    ctl_->on_wake = std::move(on_wake);
    // At shutdown: post to the seat strand, mark the stream as ending, wake its writer.
    ticket.on_stop([strand = seat_->strand(), weak = std::weak_ptr<StreamControl>(ctl_)] {
        net::post(strand, [weak] {
            if (auto c = weak.lock()) {
                c->stop = true;
                c->wake();
            }
        });
    });
    sub_->set_wake([c = ctl_.get()] { c->wake(); });
    seat_->attach(sub_, std::move(opt.last_event_id));
}

Subscription::~Subscription() {
    sub_->set_wake(nullptr);
    seat_->detach(sub_);
}

bool Batches::next(
    Counters& counters,
    hub::Seat& seat,
    hub::Subscriber& sub,
    const StreamControl& ctl,
    std::vector<hub::OutEvent>& batch) {
    const bool ending = ctl.stop || seat.closed();
    batch.clear();
    if (ending && end_batches_ >= END_DRAIN_BATCHES) {
        return true; // a seat still publishing cannot hold the end open
    }
    counters.note_lane_level(sub);
    seat.collect(sub, batch);
    counters.note_gaps(sub, gap_seen_);
    if (sub.lagged()) {
        // Let go: it fell behind the window front. Its stream ends with the reason and the
        // client resumes by Last-Event-ID; nothing is held for it meanwhile.
        counters.count_lagged();
        batch.clear();
        return true;
    }
    if (ending && !batch.empty()) {
        ++end_batches_;
    }
    return ending;
}

void encode_sse(
    const std::vector<hub::OutEvent>& batch,
    std::string& heads,
    std::vector<net::const_buffer>& bufs) {
    heads.clear();
    bufs.clear();
    // Every head of the batch goes into one text first (it may move while it grows), then the
    // buffers are taken: one head allocation per batch, the frames and pages gathered.
    boost::container::small_vector<hub::wire::SsePlaced, hub::SUBSCRIBER_BATCH_FRAMES + 8> placed;
    for (const auto& ev : batch) {
        placed.push_back(hub::wire::sse_append(ev, heads));
    }
    bufs.reserve(placed.size() * 3);
    for (const auto& p : placed) {
        bufs.emplace_back(heads.data() + p.head_offset, p.head_size);
        if (!p.body.empty()) {
            bufs.emplace_back(p.body.data(), p.body.size()); // gathered
        }
        if (!p.extra.empty()) {
            bufs.emplace_back(p.extra.data(), p.extra.size());
        }
        bufs.emplace_back(p.tail.data(), p.tail.size());
    }
}

namespace {

WsReply plain(std::string text) {
    WsReply r;
    r.pieces.head = std::move(text);
    return r;
}

WsReply ws_event(std::string_view event, const json::object& data) {
    return plain(hub::wire::ws_reply(event, json::serialize(data)));
}

WsReply ws_error(const boost::system::error_code& ec, std::string_view message) {
    return plain(hub::wire::ws_error(hub::wire::error_code_name(ec), message));
}

WsReply ws_refusal(const Refusal& r) {
    return ws_error(r.code, r.message);
}

std::shared_ptr<WsSlot> ready(WsReply r) {
    auto slot = std::make_shared<WsSlot>();
    slot->reply = std::move(r);
    return slot;
}

} // namespace

namespace {

using Kind = WsForwardOp::Kind;

// The answer to `message` when it is known at once; a `more` op is handed to the seat's
// history, which calls `done` (at once from the window, or later from the writer), and gets
// nullopt here, as does an op a mirror forwards to the seat's owner (validated here first).
std::optional<WsReply> answer_now(
    hub::Seat& seat,
    std::string_view message,
    bool read_only,
    const WsDone& done,
    const std::shared_ptr<hub::Forwarder>& forwarder) {
    boost::system::error_code pec;
    auto v = json::parse(message, pec);
    const json::object* op = (!pec && v.is_object()) ? &v.get_object() : nullptr;
    const json::value* name = op != nullptr ? op->if_contains("op") : nullptr;
    if (name == nullptr || !name->is_string()) {
        return ws_refusal(
            Refusal::of(errc::bad_request, "a message must be a JSON object with a string 'op'"));
    }
    if (read_only && name->get_string() != "more") {
        return plain(hub::wire::ws_error(
            "forbidden",
            "a viewer token may watch but not act: op '"
                + std::string(name->get_string().subview(0, 64)) + "' needs the owner's token"));
    }
    // A mirror holds the window, not the transcript nor the agent: its owner answers.
    const bool to_owner = forwarder && seat.mirror();
    const auto forward =
        [&](Kind kind, std::string method, const std::string& path, const json::object& body) {
            std::string text = method == "GET" ? std::string() : json::serialize(body);
            WsForwardOp fop{
                kind, {std::move(method), "/v1/seats/" + seat.id() + "/" + path, std::move(text)}};
            ws_forward(*forwarder, seat, std::move(fop), done);
            return std::nullopt;
        };
    if (name->get_string() == "send") {
        SendOp send;
        if (auto refused = validate_send(*op, send)) {
            return ws_refusal(*refused);
        }
        if (to_owner) {
            return forward(Kind::send, "POST", "messages", {{"text", std::move(send.text)}});
        }
        auto r = seat.submit(std::move(send.text));
        if (!r) {
            return ws_refusal(r.error());
        }
        return ws_event("sent", json::object{{"turn", r->turn}, {"queued", r->queued}});
    }
    if (name->get_string() == "cancel") {
        if (to_owner) {
            return forward(Kind::cancel, "POST", "cancel", {});
        }
        return ws_event("cancelled", json::object{{"cancelled", seat.cancel()}});
    }
    if (name->get_string() == "answer") {
        AnswerOp answer;
        const auto* id = op->if_contains("request_id");
        std::string rid = id != nullptr && id->is_string() ? std::string(id->get_string()) : "";
        if (auto refused = validate_answer(*op, std::move(rid), answer)) {
            return ws_refusal(*refused);
        }
        if (to_owner) {
            // The owner validates the same body again: the op less what the route names.
            json::object body;
            for (const auto& kv : *op) {
                if (kv.key() != "op" && kv.key() != "request_id") {
                    body.emplace(kv.key(), kv.value());
                }
            }
            return forward(
                Kind::answer,
                "POST",
                "permissions/" + boost::urls::encode(answer.answer.request_id, boost::urls::pchars),
                body);
        }
        const std::string request_id = answer.answer.request_id;
        const bool allow = answer.answer.allow;
        if (auto r = seat.answer_permission(std::move(answer.answer), answer.by); !r) {
            return ws_refusal(r.error());
        }
        return ws_event(
            "answered",
            json::object{
                {"request_id", request_id},
                {"behavior", allow ? "allow" : "deny"},
                {"by", answer.by}});
    }
    if (name->get_string() == "reset") {
        // The owner's `POST /v1/seats/{id}/reset` over the socket: answered once the new epoch
        // is on disk (this viewer, like every other, then gets the new epoch's `connected`).
        if (op->size() != 1) {
            return ws_refusal(Refusal::of(errc::bad_request, "a reset takes no fields but 'op'"));
        }
        if (to_owner) {
            return forward(Kind::reset, "POST", "reset", {});
        }
        auto self = seat.shared_from_this();
        const auto before = self->summary().epoch;
        seat.reset([done, self, before](const hub::Result<void>& r) {
            if (!r) {
                done(ws_refusal(r.error()));
                return;
            }
            done(ws_event(
                "reset",
                json::object{
                    {"epoch", self->summary().epoch},
                    {"previous_epoch", before},
                    {"archived", "transcript." + before + ".jsonl"}}));
        });
        return std::nullopt;
    }
    if (name->get_string() == "more") {
        MoreOp more;
        if (auto refused =
                validate_more(op->if_contains("before"), op->if_contains("turns"), more)) {
            return ws_refusal(*refused);
        }
        if (to_owner) {
            // Pages below the window too: the transcript is on the owner's disk.
            std::string q = "history?turns=" + std::to_string(more.turns);
            if (more.before) {
                q += "&before=" + std::to_string(*more.before);
            }
            return forward(Kind::more, "GET", q, {});
        }
        seat.history(more.before, more.turns, [done](hub::Result<hub::HistoryPage> page) {
            if (!page) {
                done(ws_refusal(page.error()));
                return;
            }
            WsReply r;
            r.keep = std::move(page->body);
            r.pieces = hub::wire::ws_reply_pieces("history", *r.keep); // shared, gathered
            done(std::move(r));
        });
        return std::nullopt;
    }
    return ws_refusal(Refusal::of(
        errc::bad_request,
        "unknown op '" + std::string(name->get_string().subview(0, 64))
            + "' (send, cancel, more, answer, reset)"));
}

} // namespace

void ws_answer(
    hub::Seat& seat,
    std::string_view message,
    bool read_only,
    const WsDone& done,
    const std::shared_ptr<hub::Forwarder>& forwarder) {
    if (auto r = answer_now(seat, message, read_only, done, forwarder)) {
        done(std::move(*r));
    }
}

void ws_take_op(
    Counters& counters,
    const std::shared_ptr<hub::Forwarder>& forwarder,
    hub::Seat& seat,
    std::string_view message,
    WsState& st) {
    if (st.replies.size() >= WS_MAX_REPLIES) {
        counters.count_ws_overloaded();
        if (st.refused++ == 0) {
            st.replies.push_back(ready(plain(hub::wire::ws_error(
                "overloaded",
                "too many ops waiting for answers (" + std::to_string(WS_MAX_REPLIES)
                    + "); this one was not done, send it again later"))));
        } else if (st.refused > WS_MAX_REPLIES) {
            st.close = WsClose{
                websocket::close_code::policy_error,
                "overloaded: ops keep coming while their answers are not read"};
        }
        return;
    }
    st.refused = 0;
    // The answer's place in the order of replies; the writer sends it once it is filled.
    auto slot = std::make_shared<WsSlot>();
    st.replies.push_back(slot);
    try {
        const auto fill = [slot, ctl = st.ctl](WsReply r) {
            slot->reply = std::move(r);
            if (auto c = ctl.lock()) {
                c->wake(); // the writer sends it (a page or an owner's answer wakes it)
            }
        };
        ws_answer(seat, message, st.read_only, fill, forwarder);
    } catch (const std::exception& e) {
        spdlog::error("WebSocket op on seat {} failed: {}", seat.id(), e.what());
        st.close = WsClose{websocket::close_code::internal_error, "internal error"};
    }
}

std::string ws_handshake_bytes(const Request& req, std::string_view leftover) {
    std::string raw = "GET ";
    raw += req.target();
    raw += " HTTP/1.1\r\n";
    for (const auto f :
         {http::field::host,
          http::field::upgrade,
          http::field::connection,
          http::field::sec_websocket_key,
          http::field::sec_websocket_version}) {
        if (auto v = req[f]; !v.empty()) {
            raw += http::to_string(f);
            raw += ": ";
            raw += v;
            raw += "\r\n";
        }
    }
    raw += "\r\n";
    raw += leftover;
    // Beast's read buffer for a handshake handed over as bytes: static_buffer of
    // websocket::stream::tcp_frame_size (1536, private) bytes.
    constexpr std::size_t BEAST_READ_BUFFER = 1536;
    if (raw.size() > BEAST_READ_BUFFER) {
        return {};
    }
    return raw;
}

} // namespace sluice::server::stream_detail
