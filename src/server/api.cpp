// The JSON API, /healthz, /metrics, /v1/stats and the page's static files.
#include "impl.hpp"

#include <sluice/core/clock.hpp>
#include <sluice/core/relay.hpp>
#include <sluice/server/errors.hpp>
#include <sluice/server/validate.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <charconv>

namespace sluice::server {

namespace json = boost::json;

namespace {

// Runs `fn` on the seat's strand and hands its result back on the caller's executor.
// A plain function (not a coroutine) returning the awaitable of one async operation.
// Callers pass a NAMED callable: GCC 12 destroys a closure temporary created inside a
// co_await operand twice (found by valgrind: double release of its captures), so no closure
// temporary may appear in a co_await expression.
template <class Fn>
auto on_seat(hub::Seat& seat, const Fn& fn) {
    using R = decltype(fn());
    auto initiate = [&seat](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        net::post(seat.strand(), [h = std::move(handler), f = std::move(f), ex]() mutable {
            R r = f();
            net::post(
                ex, [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
        });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

// Runs `fn(done)` on the seat's strand, where `done(Result<void>)` may be called later (after
// a writer job, an agent's answer); the result comes back on the caller's executor. As for
// on_seat, callers pass a NAMED callable (GCC 12).
template <class Fn>
auto on_seat_later(hub::Seat& seat, const Fn& fn) {
    using R = hub::Result<void>;
    auto initiate = [&seat](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        net::post(seat.strand(), [h, f = std::move(f), ex]() mutable {
            f([h, ex](R r) {
                net::post(ex, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
            });
        });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

// A history page, handed back on the caller's executor: the seat answers from its window, or
// reads below it on the hub's writer (never on an I/O thread).
auto read_history(
    std::shared_ptr<hub::Seat> seat, std::optional<std::uint64_t> before, std::size_t turns) {
    using R = hub::Result<hub::HistoryPage>;
    auto initiate = [](auto handler,
                       std::shared_ptr<hub::Seat> st,
                       std::optional<std::uint64_t> b,
                       std::size_t t) {
        auto ex = net::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto& strand = st->strand();
        net::post(strand, [st = std::move(st), b, t, h, ex]() {
            st->history(b, t, [h, ex](R r) {
                net::post(ex, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
            });
        });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, std::move(seat), before, turns);
}

// A hub call of the shape `f(ex, done(R))`, awaited: `done` runs on the caller's executor.
template <class R, class Fn>
auto on_hub(const Fn& fn) {
    auto initiate = [](auto handler, Fn f) {
        auto ex = net::get_associated_executor(handler);
        auto hp = std::make_shared<decltype(handler)>(std::move(handler));
        f(ex, [hp](R r) { std::move (*hp)(std::move(r)); });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, Fn(fn));
}

// Continues a foreign session as a new claude seat (disk work on the writer), back here.
auto continue_seat(hub::Hub& h, std::string id) {
    using R = hub::Result<std::shared_ptr<hub::Seat>>;
    auto initiate = [&h](auto handler, const std::string& sid) {
        auto ex = net::get_associated_executor(handler);
        auto hp = std::make_shared<decltype(handler)>(std::move(handler));
        h.continue_foreign(sid, ex, [hp](R r) { std::move (*hp)(std::move(r)); });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, std::move(id));
}

// Creates a seat with its disk work on the hub's writer; the result comes back here.
auto create_seat(hub::Hub& h, hub::SeatSpec spec) {
    using R = hub::Result<std::shared_ptr<hub::Seat>>;
    auto initiate = [&h](auto handler, hub::SeatSpec sp) {
        auto ex = net::get_associated_executor(handler);
        auto hp = std::make_shared<decltype(handler)>(std::move(handler));
        h.create(std::move(sp), ex, [hp](R r) { std::move (*hp)(std::move(r)); });
    };
    return net::async_initiate<decltype(net::use_awaitable), void(R)>(
        std::move(initiate), net::use_awaitable, std::move(spec));
}

json::object seat_json(const hub::SeatSummary& s, bool detail) {
    json::object o;
    o["id"] = s.id;
    o["name"] = s.name;
    o["agent"] = s.agent;
    if (!s.model.empty()) {
        o["model"] = s.model;
    }
    if (!s.permission_mode.empty()) {
        o["permission_mode"] = s.permission_mode;
    }
    o["state"] = hub::state_name(s.state);
    if (!s.reason.empty()) {
        o["reason"] = s.reason;
    }
    if (s.degraded) {
        o["degraded"] = true;
    }
    if (!s.warnings.empty()) {
        json::array w;
        for (const auto& b : s.warnings) {
            w.push_back(json::object{{"line", b.line}, {"reason", b.what}});
        }
        o["warnings"] = std::move(w);
    }
    o["turns"] = s.turns_known ? json::value(s.turns) : json::value(nullptr);
    o["frames"] = s.frames;
    if (!s.source.empty()) {
        o["source"] = s.source;
        o["project"] = s.project;
        o["title"] = s.title;
        o["live"] = s.last_activity
                    && std::chrono::system_clock::now() - *s.last_activity < hub::FOREIGN_LIVE_FOR;
    }
    o["queued"] = s.queued;
    if (s.pending_permissions > 0) {
        o["pending_permissions"] = s.pending_permissions;
    }
    o["last_activity"] =
        s.last_activity ? json::value(iso8601_utc(*s.last_activity)) : json::value(nullptr);
    if (detail) {
        o["epoch"] = s.epoch;
        o["window"] = json::object{
            {"first", s.window_first}, {"frames", s.window_frames}, {"bytes", s.window_bytes}};
        o["preview_dropped_bytes"] = s.preview_dropped_bytes;
        o["subscribers"] = s.subscribers;
        o["resyncs"] = s.resyncs;
    }
    return o;
}

// One hub-wide figure, named once for both /v1/stats (JSON) and /metrics (Prometheus).
struct Stat {
    const char* json_name;   // key in /v1/stats (relay figures sit under "relay")
    const char* metric_name; // sluice_<name> in /metrics
    const char* type;        // "gauge" | "counter"
    const char* help;
    std::uint64_t value;
    bool relay;
};

std::vector<Stat> hub_stats(const Server::Impl& s) {
    const auto h = s.hub.stats();
    const auto r = stream_relay_snapshot();
    return {
        {"seats", "seats", "gauge", "Seats hosted.", h.seats, false},
        {"running", "seats_running", "gauge", "Seats with a turn running.", h.running, false},
        {"subscribers", "subscribers", "gauge", "Live subscribers.", h.subscribers, false},
        {"window_frames",
         "window_frames",
         "gauge",
         "Frames held in seat windows.",
         h.window_frames,
         false},
        {"window_bytes",
         "window_bytes",
         "gauge",
         "Wire bytes held in seat windows.",
         h.window_bytes,
         false},
        {"frames_total",
         "frames_total",
         "counter",
         "Frames in every conversation.",
         h.frames_total,
         false},
        {"preview_dropped_bytes",
         "subscriber_preview_dropped_bytes_total",
         "counter",
         "Preview bytes dropped for subscribers (reported as gap).",
         h.preview_dropped_bytes,
         false},
        {"resyncs",
         "subscriber_resyncs_total",
         "counter",
         "Subscribers resynced with connected.",
         h.resyncs,
         false},
        {"transcript_write_errors",
         "transcript_write_errors_total",
         "counter",
         "Failed transcript and metadata writes (each degrades its seat).",
         h.write_errors,
         false},
        {"seats_degraded",
         "seats_degraded",
         "gauge",
         "Seats degraded by a failed write or a read-only data directory.",
         h.degraded,
         false},
        {"subscriber_preview_budget_bytes",
         "subscriber_preview_budget_bytes",
         "gauge",
         "Preview bytes a subscriber's lane may retain (its budget).",
         hub::SUBSCRIBER_PREVIEW_LIMITS.retained_budget,
         false},
        {"subscriber_preview_peak_retained_bytes",
         "subscriber_preview_peak_retained_bytes",
         "gauge",
         "Most preview bytes one subscriber's lane was seen holding (noted when its writer "
         "collects).",
         s.lane_peak_retained.load(),
         false},
        {"subscriber_gap_bytes",
         "subscriber_gap_bytes_total",
         "counter",
         "Preview bytes reported lost to subscribers in gap events (noted when their writers "
         "collect).",
         s.gap_bytes.load(),
         false},
        {"connections",
         "connections",
         "gauge",
         "Open HTTP connections.",
         s.connections->open(),
         false},
        {"requests",
         "http_requests_total",
         "counter",
         "HTTP requests read.",
         s.requests.load(),
         false},
        {"connections_rejected",
         "connections_rejected_total",
         "counter",
         "Connections refused over the limit.",
         s.rejected.load(),
         false},
        {"produced_delta_bytes",
         "relay_produced_delta_bytes_total",
         "counter",
         "Preview bytes sent into relays.",
         r.produced_delta_bytes,
         true},
        {"forwarded_delta_bytes",
         "relay_forwarded_delta_bytes_total",
         "counter",
         "Preview bytes handed to relay callers.",
         r.forwarded_delta_bytes,
         true},
        {"dropped_delta_bytes",
         "relay_dropped_delta_bytes_total",
         "counter",
         "Preview bytes dropped by relays.",
         r.dropped_delta_bytes,
         true},
        {"retained_delta_bytes",
         "relay_retained_delta_bytes",
         "gauge",
         "Preview bytes held in relays.",
         r.retained_delta_bytes,
         true},
        {"peak_retained_delta_bytes",
         "relay_peak_retained_delta_bytes",
         "gauge",
         "Highest preview bytes held in relays.",
         r.peak_retained_delta_bytes,
         true},
        {"active_relays", "relay_active", "gauge", "Relays not yet ended.", r.active_relays, true},
    };
}

json::object stats_json(const Server::Impl& s) {
    json::object o;
    json::object relay;
    for (const auto& st : hub_stats(s)) {
        (st.relay ? relay : o)[st.json_name] = st.value;
    }
    o["relay"] = std::move(relay);
    return o;
}

std::string metrics_text(const Server::Impl& s) {
    std::string out;
    for (const auto& st : hub_stats(s)) {
        out += "# HELP sluice_";
        out += st.metric_name;
        out += ' ';
        out += st.help;
        out += "\n# TYPE sluice_";
        out += st.metric_name;
        out += ' ';
        out += st.type;
        out += "\nsluice_";
        out += st.metric_name;
        out += ' ';
        out += std::to_string(st.value);
        out += '\n';
    }
    // Subscribers let go, per reason (they resume by Last-Event-ID).
    out += "# HELP sluice_subscriber_let_go_total Subscribers disconnected to protect the hub, "
           "by reason.\n# TYPE sluice_subscriber_let_go_total counter\n";
    out += "sluice_subscriber_let_go_total{reason=\"write_timeout\"} "
           + std::to_string(s.let_go_write_timeout.load()) + "\n";
    out += "sluice_subscriber_let_go_total{reason=\"lagged\"} "
           + std::to_string(s.let_go_lagged.load()) + "\n";
    out += "# HELP sluice_ws_overloaded_total WebSocket ops answered overloaded.\n"
           "# TYPE sluice_ws_overloaded_total counter\nsluice_ws_overloaded_total "
           + std::to_string(s.ws_overloaded.load()) + "\n";
    out += "# HELP sluice_accept_backoffs_total Accept pauses for want of descriptors.\n"
           "# TYPE sluice_accept_backoffs_total counter\nsluice_accept_backoffs_total "
           + std::to_string(s.accept_backoffs.load()) + "\n";
    return out;
}

// Parses a JSON object body; nullopt (and a message) when it is not one.
std::optional<json::object> parse_body(const Request& req, std::string& why) {
    if (req.body().empty()) {
        return json::object{};
    }
    boost::system::error_code ec;
    auto v = json::parse(req.body(), ec);
    if (ec) {
        why = "body is not valid JSON: " + ec.message();
        return std::nullopt;
    }
    if (!v.is_object()) {
        why = "body must be a JSON object";
        return std::nullopt;
    }
    return std::move(v.get_object());
}

// Reads an optional string field; false (and a message) when present but not a string.
bool string_field(const json::object& o, std::string_view key, std::string& out, std::string& why) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
        return true;
    }
    if (!v->is_string()) {
        why = "field '" + std::string(key) + "' must be a string";
        return false;
    }
    out = std::string(v->get_string());
    return true;
}

Response bad(const Request& req, std::string_view why) {
    return error_response(req, make_error_code(errc::bad_request), why);
}

Response bad(const Request& req, const Refusal& r) {
    return error_response(req, r.code, r.message);
}

// 405, naming the method refused and the ones the route takes.
Response method_not_allowed(const Request& req, std::string_view allowed) {
    auto res = json_response(
        req,
        405,
        error_body(
            "method_not_allowed",
            std::string(req.method_string()) + " is not allowed here; this route takes "
                + std::string(allowed)));
    res.set(http::field::allow, allowed);
    return res;
}

// A POST's JSON object body; otherwise `refused` is set to the 405 or 400 answering it.
std::optional<json::object> post_body(const Request& req, Response& refused) {
    if (req.method() != http::verb::post) {
        refused = method_not_allowed(req, "POST");
        return std::nullopt;
    }
    std::string why;
    auto body = parse_body(req, why);
    if (!body) {
        refused = bad(req, why);
    }
    return body;
}

// GET /v1/seats/{id}/permissions: the pending prompts. POST …/permissions/{request_id}
// {"behavior":"allow"|"deny","message"?,"updated_input"?,"by"?}: the first valid answer wins
// (200 {"resolved":…}); a later one gets 409, an unknown request 404.
net::awaitable<Response> permission_route(
    const Request& req,
    const std::shared_ptr<hub::Seat>& seat,
    const std::vector<std::string>& parts) {
    if (parts.size() == 4) {
        if (req.method() != http::verb::get) {
            co_return method_not_allowed(req, "GET");
        }
        const auto list = [seat] { return seat->permissions_json(); };
        auto text = co_await on_seat(*seat, list);
        co_return json_response(req, 200, R"({"permissions":)" + text + "}");
    }
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    AnswerOp op;
    if (auto refused = validate_answer(*body, parts[4], op)) {
        co_return bad(req, *refused);
    }
    const std::string behavior = op.answer.allow ? "allow" : "deny";
    const std::string by = op.by;
    auto a = std::make_shared<runtime::PermissionAnswer>(std::move(op.answer));
    const auto do_answer = [seat, a, by] { return seat->answer_permission(std::move(*a), by); };
    auto r = co_await on_seat(*seat, do_answer);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req,
        200,
        json::serialize(json::object{{"resolved", parts[4]}, {"behavior", behavior}, {"by", by}}));
}

// GET /v1/seats/{id}/frames/{seq}[?epoch=E]: the whole frame from the transcript (an oversize
// frame's full form), shared, with Range. A seq names a frame within one epoch only: with
// `epoch` (the client's, from the event id it saw the seq in) a seat that has moved to another
// epoch answers 409 instead of another conversation's frame at that position.
net::awaitable<Response> frame_route(
    const Request& req,
    const boost::urls::url_view& url,
    const std::shared_ptr<hub::Seat>& seat,
    const std::string& n) {
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    std::uint64_t seq = 0;
    const auto* end = n.data() + n.size();
    if (auto [p, ec] = std::from_chars(n.data(), end, seq); ec != std::errc{} || p != end) {
        co_return bad(req, "a frame is named by its position (a non-negative integer)");
    }
    const auto read_frame = [seat, seq, epoch = query_param(url, "epoch")]()
        -> hub::Result<std::shared_ptr<const std::string>> {
        if (epoch && *epoch != seat->epoch()) {
            return hub::Failure::of(
                errc::conflict,
                "frame " + std::to_string(seq) + " of epoch " + *epoch
                    + " is not this seat's any more: its conversation was replaced (epoch "
                    + seat->epoch() + " now)");
        }
        return seat->frame_text(seq);
    };
    auto text = co_await on_seat(*seat, read_frame);
    if (!text) {
        co_return error_response(req, text.error().code, text.error().message);
    }
    std::optional<Refusal> refused;
    bool unsatisfiable = false;
    const auto range =
        parse_range(req[http::field::range], (*text)->size(), refused, unsatisfiable);
    if (refused) {
        auto res = json_response(
            req, unsatisfiable ? 416 : 400, error_body(refused->code, refused->message));
        res.set(http::field::content_range, "bytes */" + std::to_string((*text)->size()));
        co_return res;
    }
    auto res = json_response(req, range ? 206 : 200, {});
    res.set(http::field::accept_ranges, "bytes");
    if (range) {
        res.set(
            http::field::content_range,
            "bytes " + std::to_string(range->first) + "-"
                + std::to_string(range->first + range->length - 1) + "/"
                + std::to_string((*text)->size()));
        res.body().share_slice(std::move(*text), range->first, range->length);
    } else {
        res.body() = std::move(*text);
    }
    co_return res;
}

// Whether a request to a seat is for its owner to answer: the commands (delete, rename,
// prompts, cancel, permission answers), and history pages and whole frames (a mirror holds the
// window, not the transcript, so the owner answers them, below the window too).
bool is_command(http::verb method, const std::vector<std::string>& parts) {
    if (parts.size() == 3) {
        return method == http::verb::delete_ || method == http::verb::patch;
    }
    if (method == http::verb::get) {
        return parts[3] == "history" || parts[3] == "frames";
    }
    return method == http::verb::post
           && (parts[3] == "messages" || parts[3] == "cancel" || parts[3] == "permissions"
               || parts[3] == "reset");
}

// Scale-out: a command for a mirror goes to the seat's owner node; its answer is the answer
// (503 with the reason when the owner is gone or does not answer).
net::awaitable<Response> forward_route(Server::Impl& s, const Request& req, const hub::Seat& seat) {
    if (!s.cfg.forwarder) {
        co_return error_response(
            req,
            make_error_code(errc::conflict),
            "the seat is owned by node " + seat.mirror_owner());
    }
    hub::ForwardedRequest fr{
        std::string(req.method_string()), std::string(req.target()), req.body()};
    auto op = net::async_initiate<decltype(net::use_awaitable), void(unsigned, std::string)>(
        [fwd = s.cfg.forwarder, owner = seat.mirror_owner(), fr = std::move(fr)](
            auto handler) mutable {
            auto h = std::make_shared<decltype(handler)>(std::move(handler));
            fwd->forward(owner, std::move(fr), [h](unsigned status, std::string body) {
                auto ex = net::get_associated_executor(*h);
                net::post(ex, [h, status, body = std::move(body)]() mutable {
                    std::move (*h)(status, std::move(body));
                });
            });
        },
        net::use_awaitable);
    auto [status, body] = co_await std::move(op);
    if (status == 0) {
        json::object err{{"code", "unavailable"}, {"message", body}};
        co_return json_response(req, 503, json::serialize(json::object{{"error", std::move(err)}}));
    }
    co_return json_response(req, status, std::move(body));
}

// POST /v1/seats/{id}/messages {"text":…}: 202 {"turn","queued"}.
net::awaitable<Response>
messages_route(const Request& req, const std::shared_ptr<hub::Seat>& seat) {
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    SendOp send;
    if (auto refused = validate_send(*body, send)) {
        co_return bad(req, *refused);
    }
    auto t = std::make_shared<std::string>(std::move(send.text));
    const auto submit = [seat, t] { return seat->submit(std::move(*t)); };
    auto r = co_await on_seat(*seat, submit);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req, 202, json::serialize(json::object{{"turn", r->turn}, {"queued", r->queued}}));
}

// POST /v1/seats/{id}/continue: a foreign session file becomes a hosted claude seat resuming it
// (201 {"seat","continued"}).
net::awaitable<Response>
continue_route(Server::Impl& s, const Request& req, const std::string& id) {
    if (req.method() != http::verb::post) {
        co_return method_not_allowed(req, "POST");
    }
    auto make = continue_seat(s.hub, id); // named: GCC 12 co_await
    auto made = co_await std::move(make);
    if (!made) {
        co_return error_response(req, made.error().code, made.error().message);
    }
    co_return json_response(
        req, 201, json::serialize(json::object{{"seat", (*made)->id()}, {"continued", id}}));
}

// POST /v1/seats/{id}/reset {}: the conversation starts over under a new epoch (the old
// transcript is kept); 409 while a turn runs (cancel first).
net::awaitable<Response> reset_route(const Request& req, const std::shared_ptr<hub::Seat>& seat) {
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    if (!body->empty()) {
        co_return bad(req, "a reset takes no fields (send {} or nothing)");
    }
    const auto before = seat->summary().epoch;
    const auto do_reset = [seat](hub::Seat::Done done) { seat->reset(std::move(done)); };
    auto op = on_seat_later(*seat, do_reset); // named: GCC 12 co_await
    auto r = co_await std::move(op);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req,
        200,
        json::serialize(json::object{
            {"reset", true},
            {"epoch", seat->summary().epoch},
            {"previous_epoch", before},
            {"archived", "transcript." + before + ".jsonl"}}));
}

// `?before=&turns=` of a history request (its own or a sub-agent's), as the WebSocket `more`
// op reads them: the refusal, or nothing when `out` is set.
std::optional<Refusal> more_from_query(const boost::urls::url_view& url, MoreOp& out) {
    const auto b = query_param(url, "before");
    const auto t = query_param(url, "turns");
    const json::value bv = b ? query_value(*b) : json::value(nullptr);
    const json::value tv = t ? query_value(*t) : json::value(nullptr);
    return validate_more(b ? &bv : nullptr, t ? &tv : nullptr, out);
}

// GET /v1/seats/{id}/history?before=&turns=: a page of whole turns, shared by every client
// asking for the same one.
net::awaitable<Response> history_route(
    const Request& req, const boost::urls::url_view& url, const std::shared_ptr<hub::Seat>& seat) {
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    MoreOp more;
    if (auto refused = more_from_query(url, more)) {
        co_return bad(req, *refused);
    }
    auto read = read_history(seat, more.before, more.turns); // named: GCC 12 co_await
    auto page = co_await std::move(read);
    if (!page) {
        co_return error_response(req, page.error().code, page.error().message);
    }
    auto res = json_response(req, 200, {});
    res.body() = std::move(page->body); // shared with every client asking for this page
    co_return res;
}

json::object subagent_json(const hub::Subagent& a) {
    return json::object{
        {"agent_id", a.agent_id},
        {"tool_use_id", a.tool_use_id.empty() ? json::value(nullptr) : json::value(a.tool_use_id)},
        {"description", a.description},
        {"rows", a.rows},
        {"live", a.live}};
}

// GET /v1/seats/{id}/subagents: a Claude Code session's sub-agent transcripts, each with the
// Task tool_use it answers (and `by_tool_use`: tool_use id → agent id, for a page's link).
// GET /v1/seats/{id}/subagents/{agent}/history?before=&turns=: a page of one, as history.
net::awaitable<Response> subagent_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts) {
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    const auto& id = parts[2];
    if (parts.size() == 4) {
        using R = hub::Result<std::vector<hub::Subagent>>;
        const auto list = [&s, &id](const net::any_io_executor& ex, hub::Hub::SubagentsDone d) {
            s.hub.subagents(id, ex, std::move(d));
        };
        auto op = on_hub<R>(list); // named: GCC 12 co_await
        auto r = co_await std::move(op);
        if (!r) {
            co_return error_response(req, r.error().code, r.error().message);
        }
        json::array arr;
        json::object links;
        for (const auto& a : *r) {
            arr.push_back(subagent_json(a));
            if (!a.tool_use_id.empty()) {
                links[a.tool_use_id] = a.agent_id;
            }
        }
        co_return json_response(
            req,
            200,
            json::serialize(
                json::object{{"subagents", std::move(arr)}, {"by_tool_use", std::move(links)}}));
    }
    if (parts.size() != 6 || parts[5] != "history") {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    MoreOp more;
    if (auto refused = more_from_query(url, more)) {
        co_return bad(req, *refused);
    }
    const auto& agent = parts[4];
    const auto read =
        [&s, &id, &agent, &more](const net::any_io_executor& ex, hub::Hub::PageDone d) {
            s.hub.subagent_history(id, agent, more.before, more.turns, ex, std::move(d));
        };
    auto op = on_hub<hub::Result<std::string>>(read); // named: GCC 12 co_await
    auto page = co_await std::move(op);
    if (!page) {
        co_return error_response(req, page.error().code, page.error().message);
    }
    co_return json_response(req, 200, std::move(*page));
}

net::awaitable<Response> seat_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts) {
    auto seat = s.hub.find(parts[2]);
    if (!seat) {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such seat: " + parts[2]);
    }
    const auto method = req.method();
    if (seat->mirror() && is_command(method, parts)) {
        co_return co_await forward_route(s, req, *seat);
    }
    if (parts.size() == 3) {
        if (method == http::verb::get) {
            co_return json_response(req, 200, json::serialize(seat_json(seat->summary(), true)));
        }
        if (method == http::verb::delete_) {
            if (seat->foreign()) {
                co_return error_response(
                    req, make_error_code(errc::conflict), std::string(hub::FOREIGN_READ_ONLY));
            }
            if (auto r = s.hub.remove(parts[2]); !r) {
                co_return error_response(
                    req, r.error(), "cannot delete the seat: " + r.error().message());
            }
            co_return json_response(req, 200, R"({"deleted":true})");
        }
        if (method == http::verb::patch) {
            // {"name"?, "permission_mode"?, "model"?} (at least one): a rename, and a claude
            // seat's permission mode and model; the answer is the seat as GET shows it.
            std::string why;
            auto body = parse_body(req, why);
            if (!body) {
                co_return bad(req, why);
            }
            auto change = std::make_shared<SeatChange>();
            if (auto refused = validate_seat_change(*body, *change)) {
                co_return bad(req, *refused);
            }
            // A claude seat's settings are asked of its running agent first: the PATCH answers
            // once it has answered (its refusal is the error); the rename follows a success.
            const auto do_change = [seat, change](const hub::Seat::Done& done) {
                if (change->name) {
                    if (auto refused = hub::Seat::check_name(*change->name)) {
                        done(*refused); // nothing changed: all of the request, or none
                        return;
                    }
                }
                if (!change->settings.permission_mode && !change->settings.model) {
                    done(seat->rename(std::move(*change->name)));
                    return;
                }
                seat->change_settings(change->settings, [seat, change, done](hub::Result<void> r) {
                    if (r && change->name) {
                        r = seat->rename(std::move(*change->name));
                    }
                    done(std::move(r));
                });
            };
            auto op = on_seat_later(*seat, do_change); // named: GCC 12 co_await
            auto r = co_await std::move(op);
            if (!r) {
                co_return error_response(req, r.error().code, r.error().message);
            }
            co_return json_response(req, 200, json::serialize(seat_json(seat->summary(), true)));
        }
        co_return method_not_allowed(req, "GET, PATCH, DELETE");
    }
    const auto& action = parts[3];
    if (parts.size() == 5 && action == "frames") {
        co_return co_await frame_route(req, url, seat, parts[4]);
    }
    if (parts.size() == 5 && action != "permissions") {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    if (action == "messages") {
        co_return co_await messages_route(req, seat);
    }
    if (action == "reset") {
        co_return co_await reset_route(req, seat);
    }
    if (action == "continue") {
        co_return co_await continue_route(s, req, parts[2]);
    }
    if (action == "cancel") {
        if (method != http::verb::post) {
            co_return method_not_allowed(req, "POST");
        }
        const auto do_cancel = [seat] { return seat->cancel(); };
        const bool was = co_await on_seat(*seat, do_cancel);
        co_return json_response(req, 200, json::serialize(json::object{{"cancelled", was}}));
    }
    if (action == "history") {
        co_return co_await history_route(req, url, seat);
    }
    if (action == "permissions") {
        co_return co_await permission_route(req, seat, parts);
    }
    co_return error_response(
        req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
}

} // namespace

std::optional<std::string> query_param(const boost::urls::url_view& url, std::string_view key) {
    for (const auto& p : url.params()) {
        if (p.key == key) {
            return std::string(p.value);
        }
    }
    return std::nullopt;
}

Response json_response(const Request& req, unsigned status, std::string body) {
    Response res{static_cast<http::status>(status), req.version() == 0 ? 11U : req.version()};
    res.set(http::field::server, "sluice");
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    return res;
}

Response
error_response(const Request& req, const boost::system::error_code& ec, std::string_view message) {
    return json_response(req, http_status(ec), error_body(ec, message));
}

namespace {

// POST /v1/seats: {"name", "agent", "model", "system", "cwd", "permission_mode"} → 201.
net::awaitable<Response> create_route(Server::Impl& s, const Request& req) {
    std::string why;
    auto body = parse_body(req, why);
    if (!body) {
        co_return bad(req, why);
    }
    hub::SeatSpec spec;
    if (!string_field(*body, "name", spec.name, why)
        || !string_field(*body, "agent", spec.agent, why)
        || !string_field(*body, "model", spec.model, why)
        || !string_field(*body, "system", spec.system, why)
        || !string_field(*body, "cwd", spec.cwd, why)
        || !string_field(*body, "permission_mode", spec.permission_mode, why)) {
        co_return bad(req, why);
    }
    if (!spec.agent.empty() && spec.agent != "builtin" && spec.agent != "process"
        && spec.agent != "claude") {
        co_return bad(req, R"(field 'agent' must be "builtin", "process" or "claude")");
    }
    auto make = create_seat(s.hub, std::move(spec)); // named: GCC 12 co_await
    auto seat = co_await std::move(make);
    if (!seat) {
        co_return error_response(req, seat.error().code, seat.error().message);
    }
    co_return json_response(req, 201, json::serialize(json::object{{"seat", (*seat)->id()}}));
}

// One of the page's static files. no-cache: revalidated every time; a matching ETag is
// answered 304 with no body (the vendored libraries are most of the page's bytes and change
// only with a build).
Response asset_response(const Request& req, const web::Asset& asset) {
    const auto inm = req[http::field::if_none_match]; // a list; W/ prefixes compare weakly
    const bool fresh = inm == "*" || inm.find(asset.etag) != std::string_view::npos;
    Response res{fresh ? http::status::not_modified : http::status::ok, req.version()};
    res.set(http::field::content_type, asset.content_type);
    res.set(http::field::cache_control, "no-cache");
    res.set(http::field::etag, asset.etag);
    res.keep_alive(req.keep_alive());
    if (!fresh) {
        res.body() = std::string(asset.body);
    }
    return res;
}

net::awaitable<Response>
route_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (!parts.empty() && parts.back().empty()) {
        parts.pop_back();
    }
    const auto method = req.method();
    if (parts.size() == 1 && parts[0] == "healthz") {
        // Answered without a token (a load balancer's probe): it says nothing but "ok".
        auto res = json_response(req, 200, "ok");
        res.set(http::field::content_type, "text/plain");
        co_return res;
    }
    if (parts.size() == 1 && parts[0] == "metrics") {
        auto res = json_response(req, 200, metrics_text(s));
        res.set(http::field::content_type, "text/plain; version=0.0.4");
        co_return res;
    }
    if (parts.size() >= 2 && parts[0] == "v1") {
        if (parts[1] == "stats" && parts.size() == 2) {
            co_return json_response(req, 200, json::serialize(stats_json(s)));
        }
        if (parts[1] == "seats") {
            if (parts.size() == 2) {
                if (method == http::verb::get) {
                    json::array arr;
                    for (const auto& summary : s.hub.summaries()) {
                        arr.push_back(seat_json(summary, false));
                    }
                    co_return json_response(
                        req, 200, json::serialize(json::object{{"seats", std::move(arr)}}));
                }
                if (method == http::verb::post) {
                    co_return co_await create_route(s, req);
                }
                co_return method_not_allowed(req, "GET, POST");
            }
            if (parts.size() >= 4 && parts.size() <= 6 && parts[3] == "subagents") {
                co_return co_await subagent_routes(s, req, url, parts);
            }
            if (parts.size() <= 5) {
                co_return co_await seat_routes(s, req, url, parts);
            }
        }
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    if (method == http::verb::get || method == http::verb::head) {
        if (const auto* asset = web::find_asset(url.path()); asset != nullptr) {
            co_return asset_response(req, *asset);
        }
    }
    co_return error_response(
        req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
}

} // namespace

void Server::handle_forwarded(hub::ForwardedRequest fr, hub::ForwardDone done) {
    auto s = impl_;
    auto run = [s, fr = std::move(fr), done = std::move(done)]() -> net::awaitable<void> {
        Request req{http::string_to_verb(fr.method), fr.target, 11};
        req.set(http::field::content_type, "application/json");
        req.body() = fr.body;
        req.prepare_payload();
        auto url = boost::urls::parse_origin_form(fr.target);
        if (!url) {
            done(400, error_body(make_error_code(errc::bad_request), "bad forwarded target"));
            co_return;
        }
        Response res = co_await handle_api(*s, req, *url);
        done(res.result_int(), std::string(res.body().view()));
    };
    net::co_spawn(net::make_strand(s->io), std::move(run), net::detached);
}

net::awaitable<Response>
handle_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    std::string what;
    try {
        co_return co_await route_api(s, req, url);
    } catch (const std::exception& e) {
        what = e.what();
    }
    spdlog::error(
        "{} {}: handler ended by an exception: {}",
        req.method_string(),
        access::redact_target(req.target()),
        what);
    co_return error_response(req, internal_error(), "internal error: " + what);
}

} // namespace sluice::server