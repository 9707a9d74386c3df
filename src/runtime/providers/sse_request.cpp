// The shell shared by the HTTP providers: POST + SSE, status lines, small JSON helpers.
#include "sse_request.hpp"

#include <sluice/core/error.hpp>

#include <boost/asio/this_coro.hpp>
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

ProviderSettings settings_of(const ProviderConfig& config, const SettingsSource& source) {
    return {
        config.base_url.empty() ? env_or(source.base_url_env, source.default_base)
                                : config.base_url,
        config.api_key.empty() ? env_or(source.key_env, "") : config.api_key,
        config.model.empty() ? std::string(source.default_model) : config.model};
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

// Feeds one received chunk to `parser` and hands each whole event to `on_event`; a line or
// event over the parser's limit is a malformed stream (failure set).
// Returns false when the stream must stop (a failure, or `on_event` said stop).
bool feed_events(
    const ProviderLabel& label,
    sse::Parser& parser,
    std::string_view chunk,
    std::vector<sse::Event>& events,
    const std::function<EventVerdict(const sse::Event&)>& on_event,
    Failure& failure) {
    if (parser.feed(chunk, events)) {
        failure.set(
            errc::protocol_error,
            std::string(label.name) + ": malformed stream: a line or event is over the size limit");
        events.clear();
        return false;
    }
    for (const auto& ev : events) {
        if (on_event(ev) == EventVerdict::stop) {
            events.clear();
            return false;
        }
    }
    events.clear();
    return true;
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
            std::string(label.name)
                + ": malformed stream: event data is not a JSON object: " + one_line(ev.data, 80));
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
        if (!feed_events(label, parser, body.substr(off, chunk), events, on_event, failure)) {
            return false;
        }
    }
    return !failure;
}

void finish_response(
    ProviderResponse& out, boost::json::array content, const session::Usage& usage) {
    out.assistant_message =
        boost::json::object{{"role", "assistant"}, {"content", std::move(content)}};
    out.usage = usage;
}

bool drop_cut_tool_call(
    const ProviderLabel& label,
    StopReason stop,
    const CutToolCall& call,
    const EventSink& sink,
    Failure& failure) {
    const std::string name(label.name);
    if (stop != StopReason::max_tokens) {
        failure.set(
            errc::protocol_error, name + ": malformed stream: " + std::string(call.problem));
        return false;
    }
    sink(session::Notice{
        name + ": the response hit " + std::string(call.limit) + " in the middle of tool call "
        + std::string(call.name) + " (" + std::string(call.id) + "); its " + std::string(call.part)
        + " was incomplete, so the call was dropped"});
    return true;
}

namespace {

// POSTs `call` and hands each SSE event to `assembler`; HTTP errors, transport errors and
// stream-level faults become `failure` with one clear line. True if the body was read to its
// end (or the assembler stopped it) without failure.
boost::asio::awaitable<bool> post_sse(
    transport::HttpClient& client,
    const ProviderLabel& label,
    SseCall call,
    const CancellationToken& cancel,
    StreamAssembler& assembler,
    Failure& failure) {
    call.headers.emplace_back("Content-Type", "application/json");
    call.headers.emplace_back("Accept", "text/event-stream");
    const std::string url = call.url;
    transport::HttpRequest req{
        "POST", std::move(call.url), std::move(call.headers), std::move(call.body)};
    sse::Parser parser;
    std::vector<sse::Event> events;
    std::uint64_t seen = 0;
    const std::function<EventVerdict(const sse::Event&)> on_event = [&](const sse::Event& ev) {
        ++seen;
        return assembler.on_event(ev);
    };
    const auto r = co_await client.request(std::move(req), cancel, [&](std::string_view chunk) {
        return feed_events(label, parser, chunk, events, on_event, failure);
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
                r.error(),
                std::string(label.name) + ": cannot reach " + url + ": " + client.error_message());
        }
        co_return false;
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
        co_return !failure;
    }
    const std::string detail = error_text(r->body);
    const std::string name(label.name);
    const std::string code = "HTTP " + std::to_string(status);
    if (status == 401) {
        failure.set(
            errc::unauthorized,
            name + ": authentication failed (" + code + "): " + detail + "; check "
                + std::string(label.key_env));
    } else if (status == 403) {
        failure.set(errc::unauthorized, name + ": permission denied (" + code + "): " + detail);
    } else if (status == 404) {
        failure.set(
            errc::not_found,
            name + ": not found (" + code + "): " + detail
                + "; check the model name and the base URL");
    } else if (status == 429) {
        failure.set(errc::overloaded, name + ": rate limited (" + code + "): " + detail);
    } else if (status >= 500) {
        failure.set(errc::provider_error, name + ": unavailable (" + code + "): " + detail);
    } else {
        failure.set(errc::provider_error, name + ": request rejected (" + code + "): " + detail);
    }
    co_return false;
}

} // namespace

SseProvider::SseProvider(ProviderLabel label, transport::HttpOptions http)
    : label_(label) {
    http.on_retry = [this, told = std::move(http.on_retry)](const std::string& line) {
        if (told) {
            told(line);
        }
        if (sink_ != nullptr) {
            (*sink_)(session::Notice{std::string(label_.name) + ": " + line});
        }
    };
    client_ = std::make_unique<transport::HttpClient>(std::move(http));
}

boost::asio::awaitable<boost::system::result<ProviderResponse>>
SseProvider::stream(const ProviderRequest& request, CancellationToken cancel, EventSink sink) {
    sink_ = &sink;

    struct Unset {
        const EventSink** p;

        ~Unset() { *p = nullptr; }
    } unset{&sink_};

    Failure failure;
    const auto decoder = assembler(sink, failure);
    SseCall call = prepare(request);
    const bool ok = co_await post_sse(*client_, label_, std::move(call), cancel, *decoder, failure);
    std::optional<ProviderResponse> out;
    if (ok && !failure) {
        out = decoder->finish();
    }
    if (failure || !out) {
        last_error_ = failure.message;
        co_return failure.ec ? failure.ec : make_error_code(errc::provider_error);
    }
    last_error_.clear();
    co_return std::move(*out);
}

} // namespace sluice::runtime::detail
