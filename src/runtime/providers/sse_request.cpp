// The shared plumbing of the HTTP providers: POST + SSE, status lines, small JSON helpers.
#include "sse_request.hpp"

#include <sluice/core/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace sluice::runtime::detail {

namespace json = boost::json;

void Failure::set(boost::system::error_code code, std::string text) {
    if (!ec) {
        ec = code;
        message = std::move(text);
    }
}

std::string env_or(const char* name, std::string fallback) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read-only use
    return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

std::string join_url(std::string_view base, std::string_view path) {
    while (!base.empty() && base.back() == '/') {
        base.remove_suffix(1);
    }
    while (!path.empty() && path.front() == '/') {
        path.remove_prefix(1);
    }
    return std::string(base) + "/" + std::string(path);
}

std::uint64_t count_of(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return 0;
    }
    if (v->is_uint64()) {
        return v->get_uint64();
    }
    if (v->is_int64()) {
        return v->get_int64() > 0 ? static_cast<std::uint64_t>(v->get_int64()) : 0;
    }
    if (v->is_double()) {
        return v->get_double() > 0 ? static_cast<std::uint64_t>(v->get_double()) : 0;
    }
    return 0;
}

std::string_view string_of(const json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string()) {
        return {};
    }
    return v->get_string();
}

namespace {

std::string one_line(std::string_view s, std::size_t max = 300) {
    std::string out;
    for (const char c : s) {
        if (out.size() >= max) {
            out += "…";
            break;
        }
        out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    while (!out.empty() && out.back() == ' ') {
        out.pop_back();
    }
    return out;
}

} // namespace

std::string error_text(std::string_view body) {
    boost::system::error_code ec;
    const auto v = json::parse(body, ec);
    if (!ec && v.is_object()) {
        const auto& o = v.get_object();
        const json::object* err = nullptr;
        if (const auto* e = o.if_contains("error"); e != nullptr && e->is_object()) {
            err = &e->get_object();
        }
        if (err != nullptr) {
            std::string msg(string_of(*err, "message"));
            const auto type = string_of(*err, "type");
            if (!type.empty() && !msg.empty()) {
                return one_line(msg) + " (" + std::string(type) + ")";
            }
            if (!msg.empty()) {
                return one_line(msg);
            }
            return one_line(json::serialize(*err));
        }
        if (const auto msg = string_of(o, "message"); !msg.empty()) {
            return one_line(msg);
        }
        if (const auto* e = o.if_contains("error"); e != nullptr && e->is_string()) {
            return one_line(e->get_string());
        }
    }
    return one_line(body.substr(0, body.find('\n')));
}

bool parse_object(
    const ProviderLabel& label, const sse::Event& ev, json::object& out, Failure& failure) {
    boost::system::error_code ec;
    auto v = json::parse(ev.data, ec);
    if (ec || !v.is_object()) {
        failure.set(
            errc::protocol_error,
            std::string(label.name) + ": malformed stream: event data is not a JSON object: "
                + one_line(ev.data, 80));
        return false;
    }
    out = std::move(v.get_object());
    return true;
}

bool decode_sse(
    const ProviderLabel& label,
    std::string_view body,
    std::size_t chunk,
    const std::function<EventVerdict(const sse::Event&)>& on_event,
    Failure& failure) {
    sse::Parser parser;
    std::vector<sse::Event> events;
    chunk = std::max<std::size_t>(chunk, 1);
    for (std::size_t off = 0; off < body.size(); off += chunk) {
        if (parser.feed(body.substr(off, chunk), events)) {
            failure.set(
                errc::protocol_error,
                std::string(label.name) + ": malformed stream: a line or event is over the size limit");
            return false;
        }
        for (const auto& ev : events) {
            if (on_event(ev) == EventVerdict::stop) {
                return false;
            }
        }
        events.clear();
    }
    return !failure;
}

bool post_sse(
    HttpClient& client,
    const ProviderLabel& label,
    const std::string& url,
    HttpHeaders headers,
    std::string body,
    const CancellationToken& cancel,
    const std::function<EventVerdict(const sse::Event&)>& on_event,
    Failure& failure) {
    headers.emplace_back("Content-Type", "application/json");
    headers.emplace_back("Accept", "text/event-stream");
    const HttpRequest req{"POST", url, std::move(headers), std::move(body)};
    sse::Parser parser;
    std::vector<sse::Event> events;
    std::uint64_t seen = 0;
    const auto r = client.request(req, cancel, [&](std::string_view chunk) {
        if (const auto ec = parser.feed(chunk, events)) {
            failure.set(
                errc::protocol_error,
                std::string(label.name) + ": malformed stream: a line or event is over the size limit");
            return false;
        }
        for (const auto& ev : events) {
            ++seen;
            if (on_event(ev) == EventVerdict::stop) {
                events.clear();
                return false;
            }
        }
        events.clear();
        return true;
    });
    if (!r) {
        if (r.error() == errc::cancelled) {
            failure.set(errc::cancelled, "cancelled");
        } else if (failure) {
            // The handler failed first (e.g. a stream error event).
        } else if (r.error() == errc::bad_request) {
            failure.set(errc::bad_request, std::string(label.name) + ": " + client.error_message());
        } else {
            failure.set(
                r.error(), std::string(label.name) + ": cannot reach " + url + ": " + client.error_message());
        }
        return false;
    }
    const unsigned status = r->status;
    if (status >= 200 && status < 300) {
        const auto type = r->header("content-type");
        if (seen == 0 && !failure && type.find("event-stream") == std::string::npos) {
            failure.set(
                errc::protocol_error,
                std::string(label.name) + ": malformed stream: expected text/event-stream, got "
                    + (type.empty() ? std::string("no Content-Type") : type));
        }
        return !failure;
    }
    const std::string detail = error_text(r->body);
    const std::string name(label.name);
    const std::string code = "HTTP " + std::to_string(status);
    if (status == 401) {
        failure.set(
            errc::unauthorized,
            name + ": authentication failed (" + code + "): " + detail + "; check " + std::string(label.key_env));
    } else if (status == 403) {
        failure.set(errc::unauthorized, name + ": permission denied (" + code + "): " + detail);
    } else if (status == 404) {
        failure.set(
            errc::not_found,
            name + ": not found (" + code + "): " + detail + "; check the model name and the base URL");
    } else if (status == 429) {
        failure.set(errc::overloaded, name + ": rate limited (" + code + "): " + detail);
    } else if (status >= 500) {
        failure.set(errc::provider_error, name + ": unavailable (" + code + "): " + detail);
    } else {
        failure.set(errc::provider_error, name + ": request rejected (" + code + "): " + detail);
    }
    return false;
}

} // namespace sluice::runtime::detail
