// Private: the shell shared by the HTTP providers (POST + SSE, retries, error lines, settings).
#pragma once

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/net/sse.hpp>
#include <sluice/runtime/providers/provider.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime::detail {

/// What a provider's event handler says after one SSE event.
enum class EventVerdict : std::uint8_t {
    more, ///< keep reading
    stop, ///< the response ended with an error; stop reading
};

/// An error line and its code, set by whoever failed first.
struct Failure {
    boost::system::error_code ec{};
    std::string message{};

    /// Records the first failure only.
    void set(boost::system::error_code code, std::string text);

    /// Whether a failure was recorded.
    [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(ec); }
};

/// Who is being called, for error lines.
struct ProviderLabel {
    std::string_view name;    ///< "anthropic"
    std::string_view key_env; ///< "ANTHROPIC_API_KEY"
};

/// The decoder of one provider's event stream: fed each SSE event, then asked for the summary.
/// Built per response; holds the sink and the failure it was made with by reference.
class StreamAssembler {
public:
    virtual ~StreamAssembler() = default;

    /// Handles one event (emitting StreamEvents); `stop` once a failure was recorded.
    virtual EventVerdict on_event(const sse::Event& ev) = 0;

    /// Called when the body ended without failure: the summary, or nullopt with a failure set.
    virtual std::optional<ProviderResponse> finish() = 0;
};

/// What one provider call POSTs (as JSON, asking for text/event-stream).
struct SseCall {
    std::string url;                ///< the endpoint
    transport::HttpHeaders headers; ///< auth and version headers
    std::string body;               ///< the serialized request body
};

/// The shell shared by the HTTP providers: POSTs the call a subclass prepares, feeds the SSE
/// body to the subclass's assembler, tells retries as Notices, and maps HTTP and transport
/// failures to one clear line each.
///
/// @par Thread safety
/// As Provider: one `stream` at a time; the token may be cancelled from any thread.
class SseProvider : public Provider {
public:
    /// A shell calling itself `label.name`, with the given client settings.
    SseProvider(ProviderLabel label, transport::HttpOptions http);

    boost::asio::awaitable<boost::system::result<ProviderResponse>>
    stream(const ProviderRequest& request, CancellationToken cancel, EventSink sink) final;

    [[nodiscard]] std::string error_message() const final { return last_error_; }

    [[nodiscard]] std::string name() const final { return std::string(label_.name); }

protected:
    /// The URL, headers and body of the request for `request`.
    [[nodiscard]] virtual SseCall prepare(const ProviderRequest& request) const = 0;

    /// A fresh assembler for one response.
    [[nodiscard]] virtual std::unique_ptr<StreamAssembler>
    assembler(const EventSink& sink, Failure& failure) const = 0;

private:
    ProviderLabel label_;
    std::unique_ptr<transport::HttpClient> client_;
    const EventSink* sink_{}; // the running stream's sink (for retry notices), else null
    std::string last_error_;
};

/// How a provider names a tool call whose input did not complete.
struct CutToolCall {
    std::string_view name;
    std::string_view id;
    std::string_view problem; ///< "ended without complete input", for the malformed line
    std::string_view limit;   ///< "max_tokens", the limit the response hit
    std::string_view part;    ///< "input", what was incomplete
};

/// Completes a decoded response: its assistant message (Anthropic shape) and its usage.
void finish_response(
    ProviderResponse& out, boost::json::array content, const session::Usage& usage);

/// A tool call whose input did not complete: when the response was cut by its length limit
/// (`stop` is max_tokens) the call is dropped with one Notice and true is returned; otherwise
/// the stream is malformed: failure set, false.
bool drop_cut_tool_call(
    const ProviderLabel& label,
    StopReason stop,
    const CutToolCall& call,
    const EventSink& sink,
    Failure& failure);

/// Feeds a whole body to an SSE parser in `chunk`-byte pieces (as if received), handing each
/// event to `on_event`: the sans-I/O path used by the decode_* functions and benchmarks.
/// @return true if every event was handled without failure.
bool decode_sse(
    const ProviderLabel& label,
    std::string_view body,
    std::size_t chunk,
    const std::function<EventVerdict(const sse::Event&)>& on_event,
    Failure& failure);

/// Decodes a whole captured body with a provider's assembler (`Assembler(sink, failure)`,
/// `on_event(ev)`, `finish() -> std::optional<ProviderResponse>`): the network-free path shared
/// by decode_anthropic_stream and decode_openai_stream. `error` gets the failure's line.
template <class Assembler>
boost::system::result<ProviderResponse> decode_with(
    const ProviderLabel& label,
    std::string_view body,
    std::size_t chunk,
    const EventSink& sink,
    std::string& error) {
    Failure failure;
    Assembler assembler(sink, failure);
    const bool ok = decode_sse(
        label, body, chunk, [&](const sse::Event& ev) { return assembler.on_event(ev); }, failure);
    std::optional<ProviderResponse> out;
    if (ok && !failure) {
        out = assembler.finish();
    }
    if (failure || !out) {
        error = failure.message;
        return failure.ec ? failure.ec : make_error_code(errc::provider_error);
    }
    error.clear();
    return std::move(*out);
}

/// The `error.message` (and type) of a provider's JSON error body, or its first line.
[[nodiscard]] std::string error_text(std::string_view body);

/// Parses an event's data as a JSON object; failure (with a clear line) if it is not one.
[[nodiscard]] bool parse_object(
    const ProviderLabel& label, const sse::Event& ev, boost::json::object& out, Failure& failure);

/// A provider's endpoint, key and model, once resolved.
struct ProviderSettings {
    std::string base_url; ///< the API's base URL
    std::string key;      ///< the API key ("" when none is configured)
    std::string model;    ///< the model used when a request names none
};

/// Where a provider's settings come from besides the configuration.
struct SettingsSource {
    const char* key_env;       ///< "ANTHROPIC_API_KEY"
    const char* base_url_env;  ///< "ANTHROPIC_BASE_URL"
    const char* default_base;  ///< the base URL when neither names one
    const char* default_model; ///< the model when the configuration names none
};

/// The configuration's settings, each falling back to its environment variable, then default.
[[nodiscard]] ProviderSettings
settings_of(const ProviderConfig& config, const SettingsSource& source);

/// The value of environment variable `name`, or `fallback` when unset or empty.
[[nodiscard]] std::string env_or(const char* name, std::string fallback);

/// `base` + `path`, with exactly one '/' between them.
[[nodiscard]] std::string join_url(std::string_view base, std::string_view path);

/// A JSON number or string field as an unsigned count (0 when absent or not a number).
[[nodiscard]] std::uint64_t count_of(const boost::json::object& o, std::string_view key) noexcept;

/// A string field, or "" when absent or not a string.
[[nodiscard]] std::string_view
string_of(const boost::json::object& o, std::string_view key) noexcept;

} // namespace sluice::runtime::detail
