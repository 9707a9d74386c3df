// Private: the shared plumbing of the HTTP providers (POST, SSE framing, error lines, settings).
#pragma once

#include <sluice/core/error.hpp>
#include <sluice/runtime/http_client.hpp>
#include <sluice/runtime/provider.hpp>
#include <sluice/runtime/sse.hpp>

#include <boost/json/object.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::runtime::detail {

/// What a provider's event handler says after one SSE event.
enum class EventVerdict : std::uint8_t {
    more,  ///< keep reading
    stop,  ///< the response ended with an error; stop reading
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

/// POSTs `body` as JSON to `url` and hands each SSE event to `on_event`, chunk by chunk.
/// HTTP errors, transport errors and stream-level faults become `failure` with one clear line.
/// @return true if the body was read to its end (or the handler stopped it) without failure.
bool post_sse(
    HttpClient& client,
    const ProviderLabel& label,
    const std::string& url,
    HttpHeaders headers,
    std::string body,
    const CancellationToken& cancel,
    const std::function<EventVerdict(const sse::Event&)>& on_event,
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
    const ProviderLabel& label, std::string_view body, std::size_t chunk, const EventSink& sink,
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

/// The value of environment variable `name`, or `fallback` when unset or empty.
[[nodiscard]] std::string env_or(const char* name, std::string fallback);

/// `base` + `path`, with exactly one '/' between them.
[[nodiscard]] std::string join_url(std::string_view base, std::string_view path);

/// A JSON number or string field as an unsigned count (0 when absent or not a number).
[[nodiscard]] std::uint64_t count_of(const boost::json::object& o, std::string_view key) noexcept;

/// A string field, or "" when absent or not a string.
[[nodiscard]] std::string_view string_of(const boost::json::object& o, std::string_view key) noexcept;

} // namespace sluice::runtime::detail
