// Provider: one streamed model response (Anthropic, OpenAI-compatible, scripted) as StreamEvents.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/core/event.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime {

/// Most bytes one assembled content block (its text, thinking or signature) or one tool input
/// may hold, in every provider decoder (Anthropic, OpenAI, scripted): the one place this limit
/// lives. Past it the response ends with errc::payload_too_large naming the limit, and the
/// turn ends with that error (never unbounded growth on an endless stream). Basis: 4 MiB is
/// about a million tokens of text, eight times the largest output a current model emits in one
/// response (128k tokens, ~512 KiB), so only a runaway or hostile stream reaches it; and one
/// frame that size stays under the CLI's SSE line limit.
inline constexpr std::size_t ASSEMBLED_BLOCK_MAX_BYTES = 4 * 1024 * 1024;

/// Most bytes all the blocks and tool inputs of one response may assemble together (an endless
/// stream of new blocks is bounded too). Basis: four blocks at the limit.
inline constexpr std::size_t ASSEMBLED_MESSAGE_MAX_BYTES = 4 * ASSEMBLED_BLOCK_MAX_BYTES;

/// The failure message for a block or tool input past ASSEMBLED_BLOCK_MAX_BYTES, or (with
/// `whole_message`) for a response whose blocks together passed ASSEMBLED_MESSAGE_MAX_BYTES:
/// it names the limit that was passed.
/// @param what e.g. "anthropic: text block 0".
std::string assembled_block_too_large(std::string_view what, bool whole_message = false);

/// A tool the model may call, as offered in a request.
struct ToolSpec {
    std::string name;                ///< tool name
    std::string description;         ///< what it does, for the model
    boost::json::value input_schema; ///< JSON Schema of its input object
};

/// One model request. `messages` use the Anthropic Messages shape (role + content blocks:
/// text, thinking{thinking, signature}, redacted_thinking{data}, tool_use{id, name, input},
/// tool_result{tool_use_id, content, is_error}); other providers translate from it.
struct ProviderRequest {
    std::string model;                            ///< model id
    std::string system;                           ///< system prompt (may be empty)
    std::vector<boost::json::value> messages;     ///< the conversation so far
    std::vector<ToolSpec> tools;                  ///< tools offered (may be empty)
    std::uint32_t max_tokens{8192};               ///< output cap
    std::optional<std::uint32_t> thinking_budget; ///< extended thinking budget, if enabled
};

/// Why a response ended.
enum class StopReason : std::uint8_t {
    end_turn,   ///< the model finished
    tool_use,   ///< the model wants tools run
    max_tokens, ///< cut at the output cap (a tool call may be incomplete)
    refusal,    ///< the model refused
    pause_turn, ///< the provider paused a long turn; continue with the same history
    other,      ///< anything else the provider said
};

/// What one streamed response amounted to, once it ended without a transport error.
struct ProviderResponse {
    StopReason stop_reason{StopReason::end_turn}; ///< why it ended
    std::string stop_reason_text;                 ///< the provider's own word for it
    boost::json::value assistant_message; ///< the assembled assistant message (Anthropic shape)
    session::Usage usage;                 ///< token usage reported
};

/// Receives the events of a response as they stream: previews (Text, Thinking, ToolUseDelta)
/// and semantic events (ToolUseStart, ToolUse, Notice). Called on the awaiting coroutine's
/// executor; it must not block.
using EventSink = std::function<void(StreamEvent)>;

/// A model provider.
///
/// @par Thread safety
/// One `stream` at a time per instance; the token may be cancelled from any thread, which
/// closes the connection (or ends the pacing) so `stream` completes promptly with
/// errc::cancelled.
class Provider {
public:
    virtual ~Provider() = default;

    /// Streams one response on the awaiting coroutine's executor, emitting its events to
    /// `sink` as they arrive. Never blocks the executor's thread.
    /// @par Lifetime
    /// The provider and `request` must outlive the awaited operation.
    /// @return the response summary, or an error (sluice::errc, with `error_message` set):
    ///   unreachable, 401, 404 model, malformed stream, provider `error` event, cancelled.
    virtual boost::asio::awaitable<boost::system::result<ProviderResponse>>
    stream(const ProviderRequest& request, CancellationToken cancel, EventSink sink) = 0;

    /// A one-line human explanation of the last error returned by `stream`.
    [[nodiscard]] virtual std::string error_message() const = 0;

    /// The provider's name ("anthropic", "openai", "scripted").
    [[nodiscard]] virtual std::string name() const = 0;
};

/// The one stop-reason map of every provider: Anthropic's words (end_turn, stop_sequence,
/// tool_use, max_tokens, model_context_window_exceeded, refusal, pause_turn), Chat
/// Completions' (stop, tool_calls, function_call, length, content_filter); anything else is
/// StopReason::other.
[[nodiscard]] StopReason stop_reason_from(std::string_view text) noexcept;

/// The canonical (Anthropic) word for a stop reason ("other" for StopReason::other).
[[nodiscard]] std::string_view stop_reason_text(StopReason reason) noexcept;

/// Settings for building a provider from flags or the environment.
struct ProviderConfig {
    std::string kind{"scripted"}; ///< "anthropic" | "openai" | "scripted"
    std::string base_url;         ///< empty: the provider's default (or $…_BASE_URL)
    std::string api_key;          ///< empty: $ANTHROPIC_API_KEY / $OPENAI_API_KEY
    std::string model;            ///< empty: the provider's default
    std::string script_path;      ///< scripted: a JSON script file; empty: the built-in script
    double script_pace{1.0};      ///< scripted: speed factor (0 = as fast as possible)
};

/// Builds a provider; throws std::invalid_argument on an unknown kind or a bad setting.
std::unique_ptr<Provider> make_provider(const ProviderConfig& config);

} // namespace sluice::runtime
