// The access checks every request passes before routing: Host, Origin, token, JSON, role.
#include "guard.hpp"

#include "impl.hpp"

#include <sluice/server/errors.hpp>
#include <sluice/server/web_assets.hpp>

#include <boost/json.hpp>

#include <spdlog/spdlog.h>

namespace sluice::server {

namespace {

namespace json = boost::json;

Response
refuse(const Request& req, unsigned status, std::string_view code, const std::string& message) {
    return json_response(req, status, error_body(code, message));
}

std::vector<std::string> parts_of(const boost::urls::url_view& url) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (!parts.empty() && parts.back().empty()) {
        parts.pop_back();
    }
    return parts;
}

// A browser's EventSource and WebSocket cannot send a header: only there may the token ride
// in the query.
bool query_token_route(const Request& req, const std::vector<std::string>& parts) {
    return req.method() == http::verb::get && parts.size() == 4 && parts[0] == "v1"
           && parts[1] == "seats" && (parts[3] == "events" || parts[3] == "ws");
}

bool state_changing(http::verb m) {
    return m != http::verb::get && m != http::verb::head && m != http::verb::options;
}

std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::string peer_address(const beast::tcp_stream& stream) {
    boost::system::error_code ec;
    auto ep = stream.socket().remote_endpoint(ec);
    return ec ? std::string() : ep.address().to_string();
}

Guard::Guard(const ServerConfig& cfg)
    : keyring_(cfg.token, cfg.token_dir)
    , backoff_(access::BackoffLimits{.free_failures = cfg.auth_free_failures})
    , names_(access::site_names(
          access::listen_host(cfg.listen), cfg.allow_hosts, cfg.allow_origins, cfg.public_url))
    , behind_proxy_(cfg.behind_proxy) {
}

std::optional<Response> Guard::check(
    const Request& req,
    const boost::urls::url_view& url,
    std::string_view peer,
    bool tls,
    Access& out) {
    const auto host = req[http::field::host];
    if (!access::host_allowed(names_, host)) {
        return refuse(
            req,
            421,
            "misdirected",
            "this hub does not answer to Host '" + std::string(host.substr(0, 128))
                + "' (serve --allow-host NAME or --public-url URL adds a name)");
    }
    const auto method = req.method();
    out.page_file = (method == http::verb::get || method == http::verb::head)
                    && web::find_asset(url.path()) != nullptr;
    if (out.page_file) {
        return std::nullopt; // the page's files hold no secret; foreign Origins may load them
    }
    const auto origin = req[http::field::origin];
    if (!origin.empty()
        && !access::origin_allowed(
            names_,
            origin,
            host,
            access::own_scheme(tls, behind_proxy_, peer, req["X-Forwarded-Proto"]))) {
        return refuse(
            req,
            403,
            "forbidden",
            "cross-origin request from '" + std::string(origin.substr(0, 128))
                + "' refused (serve --allow-origin ORIGIN lets one in)");
    }
    const auto parts = parts_of(url);
    if (parts.size() == 1 && parts[0] == "healthz") {
        return std::nullopt; // says "ok" and nothing else: no token needed
    }
    const auto query_token = query_param(url, "access_token");
    if (keyring_.required()) {
        if (auto wait = backoff_.held(peer, access::Backoff::Clock::now())) {
            auto res = refuse(
                req,
                429,
                "too_many_requests",
                "too many wrong tokens from this address; try again in "
                    + std::to_string(wait->count()) + " s");
            res.set(http::field::retry_after, std::to_string(wait->count()));
            return res;
        }
        std::optional<std::string_view> presented;
        const auto authorization = req[http::field::authorization];
        constexpr std::string_view BEARER = "Bearer ";
        if (authorization.size() >= BEARER.size()
            && authorization.substr(0, BEARER.size()) == BEARER) {
            presented = authorization.substr(BEARER.size());
        } else if (query_token && query_token_route(req, parts)) {
            presented = *query_token;
        }
        auth::Verdict verdict;
        if (presented) {
            verdict = keyring_.check(*presented, unix_now());
        } else {
            verdict.why = query_token ? "a token in the query is taken only by the event stream "
                                        "and the WebSocket (GET /v1/seats/{id}/events|ws); send "
                                        "Authorization: Bearer <token>"
                                      : "a bearer token is required (Authorization: Bearer "
                                        "<token>; the page takes it from its #token= link)";
        }
        if (!verdict.grant) {
            if (presented) {
                if (auto interval = backoff_.failed(peer, access::Backoff::Clock::now())) {
                    spdlog::warn(
                        "{}: repeated wrong tokens; refusing it for {} s",
                        peer.empty() ? "a peer" : peer,
                        interval->count());
                }
            }
            auto res = refuse(req, 401, "unauthorized", verdict.why);
            res.set(http::field::www_authenticate, "Bearer");
            return res;
        }
        out.grant = *verdict.grant;
        out.token_digest = auth::hex(auth::digest(*presented));
    }
    if (state_changing(method)
        && (method != http::verb::delete_ || !req.body().empty()
            || !req[http::field::content_type].empty())
        && !access::is_json(req[http::field::content_type])) {
        return refuse(
            req,
            415,
            "unsupported_media_type",
            "a " + std::string(req.method_string())
                + " must carry Content-Type: application/json (the body may be empty)");
    }
    // A viewer's one act: its own push subscriptions (POST, DELETE /v1/push/subscriptions…),
    // which hear only of the seats it may watch.
    const bool push_route = parts.size() >= 2 && parts[0] == "v1" && parts[1] == "push";
    if (out.grant.role == auth::Role::viewer && !push_route) {
        if (state_changing(method)) {
            return refuse(
                req,
                403,
                "forbidden",
                "a viewer token may watch but not act: " + std::string(req.method_string()) + " "
                    + std::string(url.path()) + " needs the owner's token");
        }
        const bool whoami = parts.size() == 2 && parts[0] == "v1" && parts[1] == "whoami";
        // Its seat's usage and hits only: GET /v1/usage|search?seat=<its seat>.
        const bool own_usage = parts.size() == 2 && parts[0] == "v1"
                               && (parts[1] == "usage" || parts[1] == "search")
                               && query_param(url, "seat") == out.grant.seat;
        if (!out.grant.seat.empty() && !whoami && !own_usage
            && !(
                parts.size() >= 3 && parts[0] == "v1" && parts[1] == "seats"
                && parts[2] == out.grant.seat)) {
            return refuse(
                req,
                403,
                "forbidden",
                "this viewer token may watch seat " + out.grant.seat + " only");
        }
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "whoami") {
        if (method != http::verb::get) {
            return refuse(req, 405, "method_not_allowed", "this route takes GET");
        }
        json::object o{
            {"role", out.grant.role == auth::Role::owner ? "owner" : "viewer"},
            {"token_required", keyring_.required()}};
        if (!out.grant.seat.empty()) {
            o["seat"] = out.grant.seat;
        }
        return json_response(req, 200, json::serialize(o));
    }
    return std::nullopt;
}

} // namespace sluice::server
