// The JSON API, /healthz, /metrics and /v1/stats (their figures: stats.cpp), and the page's
// static files.
#include "api_detail.hpp"
#include "impl.hpp"
#include "stats.hpp"

#include <sluice/core/clock.hpp>
#include <sluice/hub/agent_kinds.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>
#include <sluice/server/errors.hpp>
#include <sluice/server/validate.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

namespace sluice::server {

namespace json = boost::json;
using namespace api_detail;

namespace api_detail {

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
    if (!s.cmd.empty()) {
        o["cmd"] = s.cmd;
    }
    if (s.source.empty()) { // a hosted seat: its budget and what it spent
        o["budget_usd"] = s.budget_usd ? json::value(*s.budget_usd) : json::value(nullptr);
        o["spent_usd"] = s.spent_usd;
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
    if (s.hooked) {
        o["hooked"] = true;
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

} // namespace api_detail

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

// POST /v1/seats: {"name", "agent", "model", "system", "cwd", "permission_mode", "budget_usd"}
// → 201.
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
        || !string_field(*body, "permission_mode", spec.permission_mode, why)
        || !string_field(*body, "cmd", spec.cmd, why)) {
        co_return bad(req, why);
    }
    if (const auto* b = body->if_contains("budget_usd"); b != nullptr && !b->is_null()) {
        if (!b->is_number() || !(b->to_number<double>() >= 0)) {
            co_return bad(req, "field 'budget_usd' must be an amount of 0 or more");
        }
        spec.budget_usd = b->to_number<double>();
    }
    if (!spec.agent.empty() && spec.agent != "builtin" && spec.agent != "process"
        && !hub::hosts_cli(spec.agent)) {
        co_return bad(req, "field 'agent' must be " + std::string(hub::AGENT_KINDS_TEXT));
    }
    if (spec.agent == "acp" && !spec.cmd.empty()) {
        // Only a command line the hub was started with runs: compared whole, byte for byte.
        const auto kind = std::find_if(
            s.cfg.agent_kinds.begin(), s.cfg.agent_kinds.end(), [](const AgentKind& k) {
                return k.kind == "acp";
            });
        if (kind == s.cfg.agent_kinds.end() || kind->commands.empty()) {
            co_return bad(
                req, "this hub allows no ACP agents (start it with serve --acp-agent CMD)");
        }
        if (std::find(kind->commands.begin(), kind->commands.end(), spec.cmd)
            == kind->commands.end()) {
            std::string allowed;
            for (const auto& c : kind->commands) {
                allowed += (allowed.empty() ? "'" : ", '") + c + "'";
            }
            // A line the hub was given whose executable is missing is said so.
            co_return bad(
                req,
                "field 'cmd' must be one of the command lines this hub allows (serve "
                "--acp-agent): "
                    + allowed + (kind->reason.empty() ? "" : " (" + kind->reason + ")"));
        }
    }
    auto make = s.hub.async_create(std::move(spec), net::use_awaitable); // named: GCC 12 co_await
    auto seat = co_await std::move(make);
    if (!seat) {
        co_return error_response(req, seat.error().code, seat.error().message);
    }
    co_return json_response(req, 201, json::serialize(json::object{{"seat", (*seat)->id()}}));
}

// GET /v1/agents: the agent kinds a seat may be created with here (and why one cannot), the
// permission modes of a claude seat, and the workspace root its cwd lies in: what the page's
// New seat dialog offers.
Response agents_response(const Request& req, const ServerConfig& cfg) {
    json::array kinds;
    for (const auto& k : cfg.agent_kinds) {
        json::object o{{"kind", k.kind}, {"available", k.available}};
        if (!k.detail.empty()) {
            o["detail"] = k.detail;
        }
        if (!k.reason.empty()) {
            o["reason"] = k.reason;
        }
        if (k.kind == "acp") {
            o["commands"] = json::array(k.commands.begin(), k.commands.end());
        }
        kinds.push_back(std::move(o));
    }
    const auto words = [](std::string_view list) {
        json::array out;
        while (!list.empty()) {
            const auto comma = list.find(',');
            out.emplace_back(list.substr(0, comma));
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 2);
        }
        return out;
    };
    return json_response(
        req,
        200,
        json::serialize(json::object{
            {"agents", std::move(kinds)},
            {"permission_modes", words(runtime::stream_json::PERMISSION_MODES)},
            {"approval_policies", words(runtime::codex::APPROVAL_POLICIES)},
            {"workspace_root", cfg.workspace_root}}));
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

net::awaitable<Response> route_api(
    Server::Impl& s, const Request& req, const boost::urls::url_view& url, const Access& who) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (!parts.empty() && parts.back().empty()) {
        parts.pop_back();
    }
    const auto method = req.method();
    // The read-only routes take GET (and HEAD); another method is a 405, as openapi.json says.
    const bool read = method == http::verb::get || method == http::verb::head;
    const bool read_only_route =
        (parts.size() == 1 && (parts[0] == "healthz" || parts[0] == "metrics"))
        || (parts.size() == 2 && parts[0] == "v1" && (parts[1] == "stats" || parts[1] == "agents"));
    if (read_only_route && !read) {
        co_return method_not_allowed(req, "GET");
    }
    if (parts.size() == 1 && parts[0] == "healthz") {
        // Answered without a token (a load balancer's probe): it says nothing but "ok".
        auto res = json_response(req, 200, "ok");
        res.set(http::field::content_type, "text/plain");
        co_return res;
    }
    if (parts.size() == 1 && parts[0] == "metrics") {
        auto text = metrics_text(s.hub, s.counters, s.connections->open());
        if (s.cfg.push) {
            text += push::metrics_text(s.cfg.push->stats());
        }
        auto res = json_response(req, 200, std::move(text));
        res.set(http::field::content_type, "text/plain; version=0.0.4");
        co_return res;
    }
    if (parts.size() >= 2 && parts[0] == "v1") {
        if (parts[1] == "stats" && parts.size() == 2) {
            auto o = stats_json(s.hub, s.counters, s.connections->open());
            // Disk use: each hosted seat's folder and the removed seats kept in archive/, walked
            // on the writer; null when its queue is full.
            auto walk = s.hub.async_disk_use(net::use_awaitable); // named: GCC 12 co_await
            const auto use = co_await std::move(walk);
            if (!use) {
                o["disk"] = nullptr;
            } else {
                json::object seats;
                std::uint64_t total = use->archive_bytes;
                for (const auto& [id, bytes] : use->seats) {
                    seats[id] = bytes;
                    total += bytes;
                }
                o["disk"] = json::object{
                    {"bytes", total},
                    {"archive_bytes", use->archive_bytes},
                    {"seats", std::move(seats)}};
            }
            co_return json_response(req, 200, json::serialize(o));
        }
        if (parts[1] == "usage" && parts.size() == 2) {
            co_return usage_response(s, req, url);
        }
        if (parts[1] == "search" && parts.size() == 2) {
            co_return co_await search_response(s, req, url);
        }
        if (parts[1] == "agents" && parts.size() == 2) {
            co_return agents_response(req, s.cfg);
        }
        if (parts[1] == "hooks") {
            co_return co_await hook_routes(s, req, parts);
        }
        if (parts[1] == "push") {
            co_return co_await push_routes(s, req, parts, who);
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
        // Named, not a default argument's temporary: GCC 12 destroys a temporary inside a
        // co_await expression twice (ASan: a free of memory not allocated, RedisCluster.*).
        const Access owner{};
        auto op = handle_api(*s, req, *url, owner);
        Response res = co_await std::move(op);
        done(res.result_int(), std::string(res.body().view()));
    };
    net::co_spawn(net::make_strand(s->io), std::move(run), net::detached);
}

net::awaitable<Response> handle_api(
    Server::Impl& s, const Request& req, const boost::urls::url_view& url, const Access& who) {
    std::string what;
    try {
        co_return co_await route_api(s, req, url, who);
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