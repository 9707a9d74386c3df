// The OpenAI Chat Completions provider (OpenAI and compatible servers: llama.cpp, vLLM, Ollama…).
#pragma once

#include <sluice/net/http_client.hpp>
#include <sluice/runtime/providers/provider.hpp>

#include <boost/json/array.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime {

/// The default base URL (overridden by ProviderConfig::base_url, then $OPENAI_BASE_URL).
inline constexpr const char* OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/// The model used when neither the request nor the configuration names one.
inline constexpr const char* OPENAI_DEFAULT_MODEL = "gpt-4o-mini";

/// Builds the Chat Completions provider: POST {base}/chat/completions with `stream: true` and
/// `stream_options.include_usage`, `Authorization: Bearer` when a key is set (compatible local
/// servers need none).
///
/// Streams `content` as Text, `reasoning_content`/`reasoning` as Thinking, `tool_calls`
/// argument fragments (by index, parallel calls) as ToolUseStart/ToolUseDelta, and each call's
/// parsed arguments as ToolUse when the response finishes. Only choice 0 is followed. Errors in
/// a chunk (`error` field) or an `event: error` end the response with errc::provider_error.
/// @param config key from `api_key` or $OPENAI_API_KEY; base URL as above.
/// @param http client settings (timeouts, retries, proxy).
std::unique_ptr<Provider>
make_openai_provider(const ProviderConfig& config, transport::HttpOptions http = {});

/// Translates an Anthropic-shaped history (see ProviderRequest) into Chat Completions messages:
/// system first; tool_result blocks become `tool` messages (before the user's own text);
/// tool_use blocks become `tool_calls`; thinking blocks are dropped.
[[nodiscard]] boost::json::array chat_messages_from_anthropic(
    std::string_view system, const std::vector<boost::json::value>& messages);

/// The JSON body of a Chat Completions streaming request (exposed for tests).
[[nodiscard]] boost::json::object openai_request_body(
    const ProviderRequest& request, std::string_view default_model, bool max_completion_tokens);

/// Sans-I/O: decodes a whole Chat Completions SSE body (fed in `chunk`-byte pieces) into events on
/// `sink` and the response summary, exactly as the provider does with a live stream.
/// @param error set to the one-line message when the result is an error.
boost::system::result<ProviderResponse> decode_openai_stream(
    std::string_view body, std::size_t chunk, const EventSink& sink, std::string& error);

} // namespace sluice::runtime
