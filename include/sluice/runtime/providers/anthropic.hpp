// The Anthropic Messages API provider (streaming over HTTPS, SSE).
#pragma once

#include <sluice/net/http_client.hpp>
#include <sluice/runtime/providers/provider.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sluice::runtime {

/// The default base URL (overridden by ProviderConfig::base_url, then $ANTHROPIC_BASE_URL).
inline constexpr const char* ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

/// The model used when neither the request nor the configuration names one.
inline constexpr const char* ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5";

/// The `anthropic-version` header sent with every request.
inline constexpr const char* ANTHROPIC_API_VERSION = "2023-06-01";

/// Builds the Anthropic provider: POST {base}/v1/messages with `stream: true`, `x-api-key`.
///
/// Streams text and thinking as previews, tool_use blocks as ToolUseStart, ToolUseDelta
/// (input_json_delta) and ToolUse (input parsed at content_block_stop); keeps thinking
/// signatures and redacted_thinking in the assembled assistant message for the next request.
/// A tool call cut off by max_tokens is dropped with a Notice, never emitted half-parsed.
/// @param config key from `api_key` or $ANTHROPIC_API_KEY; base URL as above.
/// @param http client settings (timeouts, retries, proxy).
/// @throws std::invalid_argument when no API key is configured.
std::unique_ptr<Provider>
make_anthropic_provider(const ProviderConfig& config, transport::HttpOptions http = {});

/// The JSON body of a Messages API streaming request (exposed for tests).
[[nodiscard]] boost::json::object
anthropic_request_body(const ProviderRequest& request, std::string_view default_model);

/// Sans-I/O: decodes a whole Messages SSE body (fed in `chunk`-byte pieces) into events on
/// `sink` and the response summary, exactly as the provider does with a live stream.
/// @param error set to the one-line message when the result is an error.
boost::system::result<ProviderResponse> decode_anthropic_stream(
    std::string_view body, std::size_t chunk, const EventSink& sink, std::string& error);

} // namespace sluice::runtime
