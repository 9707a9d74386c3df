// The JSON API, /healthz, /metrics, /v1/stats and the page's static files.
#include "impl.hpp"

#include <sluice/core/clock.hpp>
#include <sluice/core/relay.hpp>
#include <sluice/server/errors.hpp>
#include <sluice/server/validate.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

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

json::object seat_json(const hub::SeatSummary& s, bool detail) {
    json::object o;
    o["id"] = s.id;
    o["name"] = s.name;
    o["agent"] = s.agent;
    o["state"] = hub::state_name(s.state);
    if (!s.reason.empty()) {
        o["reason"] = s.reason;
    }
    if (s.degraded) {
        o["degraded"] = true;
    }
    o["turns"] = s.turns;
    o["frames"] = s.frames;
    o["queued"] = s.queued;
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
    if (parts.size() == 3) {
        if (method == http::verb::get) {
            co_return json_response(req, 200, json::serialize(seat_json(seat->summary(), true)));
        }
        if (method == http::verb::delete_) {
            if (auto r = s.hub.remove(parts[2]); !r) {
                co_return error_response(
                    req, r.error(), "cannot delete the seat: " + r.error().message());
            }
            co_return json_response(req, 200, R"({"deleted":true})");
        }
        co_return method_not_allowed(req, "GET, DELETE");
    }
    const auto& action = parts[3];
    if (action == "messages") {
        if (method != http::verb::post) {
            co_return method_not_allowed(req, "POST");
        }
        std::string why;
        auto body = parse_body(req, why);
        if (!body) {
            co_return bad(req, why);
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
    if (action == "cancel") {
        if (method != http::verb::post) {
            co_return method_not_allowed(req, "POST");
        }
        const auto do_cancel = [seat] { return seat->cancel(); };
        const bool was = co_await on_seat(*seat, do_cancel);
        co_return json_response(req, 200, json::serialize(json::object{{"cancelled", was}}));
    }
    if (action == "history") {
        if (method != http::verb::get) {
            co_return method_not_allowed(req, "GET");
        }
        const auto b = query_param(url, "before");
        const auto t = query_param(url, "turns");
        const json::value bv = b ? query_value(*b) : json::value(nullptr);
        const json::value tv = t ? query_value(*t) : json::value(nullptr);
        MoreOp more;
        if (auto refused = validate_more(b ? &bv : nullptr, t ? &tv : nullptr, more)) {
            co_return bad(req, *refused);
        }
        const auto read_page = [seat, more] { return seat->history(more.before, more.turns); };
        auto page = co_await on_seat(*seat, read_page);
        if (!page) {
            co_return error_response(req, page.error().code, page.error().message);
        }
        co_return json_response(req, 200, std::move(page->json));
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

net::awaitable<Response>
route_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (!parts.empty() && parts.back().empty()) {
        parts.pop_back();
    }
    const auto method = req.method();
    if (parts.size() == 1 && parts[0] == "healthz") {
        co_return json_response(req, 200, R"({"ok":true})");
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
                    for (const auto& seat : s.hub.list()) {
                        arr.push_back(seat_json(seat->summary(), false));
                    }
                    co_return json_response(
                        req, 200, json::serialize(json::object{{"seats", std::move(arr)}}));
                }
                if (method == http::verb::post) {
                    std::string why;
                    auto body = parse_body(req, why);
                    if (!body) {
                        co_return bad(req, why);
                    }
                    hub::SeatSpec spec;
                    if (!string_field(*body, "name", spec.name, why)
                        || !string_field(*body, "agent", spec.agent, why)
                        || !string_field(*body, "model", spec.model, why)
                        || !string_field(*body, "system", spec.system, why)) {
                        co_return bad(req, why);
                    }
                    if (!spec.agent.empty() && spec.agent != "builtin" && spec.agent != "process") {
                        co_return bad(req, R"(field 'agent' must be "builtin" or "process")");
                    }
                    auto seat = s.hub.create(std::move(spec));
                    if (!seat) {
                        co_return error_response(req, seat.error().code, seat.error().message);
                    }
                    co_return json_response(
                        req, 201, json::serialize(json::object{{"seat", (*seat)->id()}}));
                }
                co_return method_not_allowed(req, "GET, POST");
            }
            if (parts.size() <= 4) {
                co_return co_await seat_routes(s, req, url, parts);
            }
        }
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    if (method == http::verb::get || method == http::verb::head) {
        if (const auto* asset = web::find_asset(url.path()); asset != nullptr) {
            Response res{http::status::ok, req.version()};
            res.set(http::field::content_type, asset->content_type);
            res.set(http::field::cache_control, "no-cache");
            res.keep_alive(req.keep_alive());
            res.body() = std::string(asset->body);
            co_return res;
        }
    }
    co_return error_response(
        req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
}

} // namespace

net::awaitable<Response>
handle_api(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    std::string what;
    try {
        co_return co_await route_api(s, req, url);
    } catch (const std::exception& e) {
        what = e.what();
    }
    spdlog::error(
        "{} {}: handler ended by an exception: {}", req.method_string(), req.target(), what);
    co_return error_response(req, internal_error(), "internal error: " + what);
}

} // namespace sluice::server