// The client commands' side of the hub's HTTP API: the token, one JSON call, an oversize frame
// fetched whole, and a seat's event stream followed across reconnects.
#include "client.hpp"
#include "locations.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/server/auth.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace sluice::app::client {

namespace json = boost::json;

namespace {

transport::HttpHeaders auth(const ClientOptions& o) {
    transport::HttpHeaders h;
    const std::string token = client_token(o);
    if (!token.empty()) {
        h.emplace_back("Authorization", "Bearer " + token);
    }
    return h;
}

transport::HttpOptions client_options(bool streaming) {
    transport::HttpOptions opt;
    opt.max_attempts = 1;
    opt.proxy = "";
    opt.connect_timeout = std::chrono::seconds(5);
    opt.first_byte_timeout = std::chrono::seconds(30);
    opt.idle_timeout =
        streaming ? std::chrono::milliseconds(60'000) : std::chrono::milliseconds(30'000);
    return opt;
}

// Whether `row` is an oversize frame's reference form (large blocks cut; see frame_ref.hpp).
bool is_reference_form(const json::value& row) {
    return row.is_object() && row.as_object().contains("sluice_ref");
}

} // namespace

std::string client_token(const ClientOptions& o) {
    std::string token = o.token;
    if (token.empty() && std::getenv("SLUICE_TOKEN") != nullptr) {
        token = std::getenv("SLUICE_TOKEN");
    }
    if (token.empty()) {
        token = server::auth::read_owner_token(o.data).value_or("");
    }
    return token;
}

void resolve(ClientOptions& o) {
    o.data = resolve_data_dir(o.data, false).string();
    o.hub = resolve_hub_url(o.hub, o.data);
}

std::optional<json::value> call(
    const ClientOptions& o,
    const std::string& method,
    const std::string& path,
    const std::string& body,
    bool quiet) {
    transport::HttpClient client(client_options(false));
    transport::HttpRequest req{method, o.hub + path, auth(o), body};
    if (method != "GET") {
        req.headers.emplace_back("Content-Type", "application/json"); // the hub takes JSON only
    }
    std::string got;
    auto r = client.request_blocking(req, CancellationToken{}, [&](std::string_view c) {
        got.append(c);
        return true;
    });
    if (!r) {
        if (quiet) {
            return std::nullopt;
        }
        std::fprintf(
            stderr,
            "sluice: cannot reach the hub at %s: %s\n",
            o.hub.c_str(),
            client.error_message().c_str());
        return std::nullopt;
    }
    const std::string& text = r->status / 100 == 2 ? got : r->body;
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (r->status / 100 != 2) {
        if (quiet) {
            return std::nullopt;
        }
        std::string msg = text;
        if (!ec && v.is_object() && v.as_object().contains("error")) {
            msg = std::string(v.at("error").at("message").as_string());
        }
        std::fprintf(
            stderr,
            "sluice: %s %s: HTTP %u: %s\n",
            method.c_str(),
            path.c_str(),
            r->status,
            msg.c_str());
        if (r->status == 401 && client_token(o).empty()) {
            // Only when none was sent: a token the hub refused is named by its message.
            std::fprintf(
                stderr,
                "sluice: pass --token or SLUICE_TOKEN, or --data DIR of the hub (its token is "
                "in DIR/token)\n");
        }
        return std::nullopt;
    }
    if (ec) {
        if (quiet) {
            return std::nullopt;
        }
        std::fprintf(stderr, "sluice: the hub answered something that is not JSON\n");
        return std::nullopt;
    }
    return v;
}

std::string_view epoch_of(std::string_view id) {
    const auto colon = id.find(':');
    return colon == std::string_view::npos ? std::string_view{} : id.substr(0, colon);
}

json::value shown_row(
    const ClientOptions& o,
    const std::string& seat,
    std::string_view epoch,
    std::uint64_t seq,
    json::value row,
    bool full,
    bool& failed) {
    if (!is_reference_form(row)) {
        return row;
    }
    if (full) {
        // The epoch the seq was seen in: a seat whose conversation was replaced since answers
        // 409, never another conversation's frame at that position.
        auto target = "/v1/seats/" + seat + "/frames/" + std::to_string(seq);
        if (!epoch.empty()) {
            target += "?epoch=" + std::string(epoch);
        }
        if (auto whole = call(o, "GET", target)) {
            return std::move(*whole);
        }
        failed = true;
        return row;
    }
    const auto& ref = row.at("sluice_ref");
    std::fprintf(
        stderr,
        "sluice: frame %llu is %llu bytes; its large blocks are shown cut (head and tail). "
        "--full prints it whole (GET /v1/seats/%s/frames/%llu)\n",
        static_cast<unsigned long long>(seq),
        static_cast<unsigned long long>(ref.at("bytes").to_number<std::uint64_t>()),
        seat.c_str(),
        static_cast<unsigned long long>(seq));
    return row;
}

bool follow(
    const ClientOptions& o,
    const std::string& seat,
    const std::function<bool(const sse::Event&)>& on_event,
    std::atomic<bool>& stop,
    const std::function<void()>& on_connected,
    const CancellationToken& cancel) {
    std::string last;
    while (!stop) {
        transport::HttpClient client(client_options(true));
        transport::HttpRequest req{"GET", o.hub + "/v1/seats/" + seat + "/events", auth(o), {}};
        if (!last.empty()) {
            req.headers.emplace_back("Last-Event-ID", last);
        }
        sse::Parser parser;
        std::vector<sse::Event> events;
        bool finished = false;
        bool too_large = false;
        auto r = client.request_blocking(req, cancel, [&](std::string_view chunk) {
            events.clear();
            if (auto ec = parser.feed(chunk, events)) {
                too_large = ec == make_error_code(errc::payload_too_large);
                return false;
            }
            for (const auto& e : events) {
                if (!e.id.empty()) {
                    last = e.id;
                }
                if ((e.type == "connected" || e.type == "resumed") && on_connected) {
                    on_connected();
                }
                if (!on_event(e)) {
                    finished = true;
                    return false;
                }
            }
            return !stop.load();
        });
        if (too_large) {
            std::fprintf(
                stderr,
                "sluice: an event after %s is larger than this client's limit (%zu bytes, "
                "payload_too_large); stopping instead of reconnecting to the same event\n",
                last.empty() ? "the start" : last.c_str(),
                sse::Limits{}.max_line);
            return false;
        }
        if (finished || stop || cancel.is_cancelled()) {
            return true;
        }
        if (r && r->status == 404) {
            std::fprintf(stderr, "sluice: no such seat: %s\n", seat.c_str());
            return false;
        }
        if (r && (r->status == 401 || r->status == 403)) {
            std::fprintf(
                stderr,
                "sluice: the hub refused the stream (HTTP %u): %s\n",
                r->status,
                r->body.c_str());
            return false;
        }
        std::fprintf(stderr, "sluice: stream dropped; reconnecting…\n");
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return true; // stopped
}

} // namespace sluice::app::client
