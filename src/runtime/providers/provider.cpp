// make_provider, and the one stop-reason map every provider uses.
#include <sluice/runtime/providers/anthropic.hpp>
#include <sluice/runtime/providers/openai.hpp>
#include <sluice/runtime/providers/provider.hpp>
#include <sluice/runtime/providers/scripted.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace sluice::runtime {

namespace {

// Both vocabularies in one table; the first row naming a reason is its canonical word.
constexpr std::array<std::pair<std::string_view, StopReason>, 12> STOP_REASONS{{
    {"end_turn", StopReason::end_turn},
    {"tool_use", StopReason::tool_use},
    {"max_tokens", StopReason::max_tokens},
    {"refusal", StopReason::refusal},
    {"pause_turn", StopReason::pause_turn},
    {"stop_sequence", StopReason::end_turn},
    {"model_context_window_exceeded", StopReason::max_tokens},
    {"stop", StopReason::end_turn},
    {"tool_calls", StopReason::tool_use},
    {"function_call", StopReason::tool_use},
    {"length", StopReason::max_tokens},
    {"content_filter", StopReason::refusal},
}};

} // namespace

StopReason stop_reason_from(std::string_view text) noexcept {
    for (const auto& [word, reason] : STOP_REASONS) {
        if (word == text) {
            return reason;
        }
    }
    return StopReason::other;
}

std::string_view stop_reason_text(StopReason reason) noexcept {
    for (const auto& [word, r] : STOP_REASONS) {
        if (r == reason) {
            return word;
        }
    }
    return "other";
}

std::unique_ptr<Provider> make_provider(const ProviderConfig& config) {
    if (config.kind == "scripted") {
        return make_scripted_provider(config);
    }
    if (config.kind == "anthropic") {
        return make_anthropic_provider(config);
    }
    if (config.kind == "openai") {
        return make_openai_provider(config);
    }
    throw std::invalid_argument(
        "unknown provider '" + config.kind + "' (known: anthropic, openai, scripted)");
}

std::string assembled_block_too_large(std::string_view what, bool whole_message) {
    const std::size_t limit =
        whole_message ? ASSEMBLED_MESSAGE_MAX_BYTES : ASSEMBLED_BLOCK_MAX_BYTES;
    const char* name = whole_message ? "ASSEMBLED_MESSAGE_MAX_BYTES" : "ASSEMBLED_BLOCK_MAX_BYTES";
    return std::string(what) + " is over the assembly limit (" + std::to_string(limit) + " bytes, "
           + name + "); the response was stopped";
}

} // namespace sluice::runtime
