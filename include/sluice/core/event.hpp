// StreamEvent: the events of an agent's turn, in three families (llm, session, agent), and their
// JSON.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice {

namespace llm {

/// A preview: a piece of the model's answer text.
struct Text {
    std::string text; ///< UTF-8 text
};

/// A preview: a piece of the model's thinking.
struct Thinking {
    std::string text; ///< UTF-8 text
};

/// Semantic: the model started a tool call (its input follows as ToolUseDelta previews).
struct ToolUseStart {
    std::string tool_name; ///< the tool's name
    std::string tool_id;   ///< the provider's id of this call
};

/// A preview: a piece of a tool call's input JSON as the model writes it.
struct ToolUseDelta {
    std::string tool_id; ///< which call this belongs to
    std::string delta;   ///< raw partial JSON
};

/// Semantic: a complete tool call.
struct ToolUse {
    std::string tool_name;    ///< the tool's name
    std::string tool_id;      ///< the provider's id of this call
    boost::json::value input; ///< the parsed input object
};

/// Semantic: a tool's complete result.
struct ToolResult {
    std::string tool_id; ///< the call this answers
    std::string result;  ///< the output given to the model (capped)
    bool is_error{};     ///< whether the tool failed
};

/// A preview: a piece of a tool's output as it runs.
struct ToolResultDelta {
    std::string tool_id; ///< the call this belongs to
    std::string delta;   ///< UTF-8 output
};

} // namespace llm

namespace session {

/// One message of provider-format history, shared and immutable.
using HistoryMessage = std::shared_ptr<const boost::json::value>;

/// Semantic: the conversation so far, as shared pointers (never a deep copy).
struct MessageHistory {
    std::shared_ptr<const std::vector<HistoryMessage>> messages; ///< the history, oldest first
};

/// Semantic: token usage of the turn.
struct Usage {
    std::uint64_t input{};          ///< input tokens
    std::uint64_t output{};         ///< output tokens
    std::uint64_t cache_read{};     ///< input tokens read from the prompt cache
    std::uint64_t cache_creation{}; ///< input tokens written to the prompt cache
    std::string model{};            ///< the model that answered
};

/// Semantic: the turn is over; always the last event.
struct Done {};

/// How a turn that ended in an error ended.
enum class Outcome : std::uint8_t {
    failed,      ///< the provider, a tool or the runtime failed
    cancelled,   ///< the caller or an operator cancelled it
    timed_out,   ///< a deadline passed
    over_budget, ///< it spent what it was allowed (RuntimeConfig::budget_left)
};

/// Semantic: the turn failed; `Done` follows.
struct Error {
    std::string message{};            ///< one line, for a person
    Outcome outcome{Outcome::failed}; ///< how it ended
};

/// Semantic: something a person watching should know (a retry, a fallback).
struct Notice {
    std::string text; ///< one line
};

} // namespace session

namespace agent {

/// Semantic: a sub-agent started (for the tool call `tool_id`).
struct SubagentStart {
    std::string tool_id{};     ///< the Task/Agent tool call that started it
    std::string description{}; ///< what it was asked to do
};

/// Semantic: a sub-agent's progress.
struct SubagentUpdate {
    std::string tool_id{}; ///< the sub-agent's tool call
    std::string text{};    ///< what it reported
};

/// Semantic: a sub-agent finished.
struct SubagentDone {
    std::string tool_id{}; ///< the sub-agent's tool call
    std::string result{};  ///< its final report
    bool is_error{};       ///< whether it failed
};

/// Semantic: a steering message sent mid-turn reached the agent.
struct SteeringDelivered {
    std::string text{}; ///< the message delivered
};

} // namespace agent

/// One event of a turn. Previews (Text, Thinking, ToolUseDelta, ToolResultDelta) are lossy;
/// every other alternative is semantic and is never dropped, merged, split or reordered.
using StreamEvent = std::variant<
    llm::Text,
    llm::Thinking,
    llm::ToolUseStart,
    llm::ToolUseDelta,
    llm::ToolUse,
    llm::ToolResult,
    llm::ToolResultDelta,
    session::MessageHistory,
    session::Usage,
    session::Done,
    session::Error,
    session::Notice,
    agent::SubagentStart,
    agent::SubagentUpdate,
    agent::SubagentDone,
    agent::SteeringDelivered>;

/// The UTF-8 byte length of a preview's payload, or nullopt for a semantic event.
[[nodiscard]] std::optional<std::size_t> preview_bytes(const StreamEvent& ev) noexcept;

/// Whether `ev` travels in the lossy preview lane.
[[nodiscard]] inline bool is_preview(const StreamEvent& ev) noexcept {
    return preview_bytes(ev).has_value();
}

/// The payload of a preview (text or delta); empty for a semantic event.
[[nodiscard]] std::string_view preview_payload(const StreamEvent& ev) noexcept;

/// The mutable payload of a preview, or nullptr for a semantic event.
[[nodiscard]] std::string* preview_payload_mut(StreamEvent& ev) noexcept;

/// The event's wire name ("text", "tool_use", "done", …), as used in its JSON `type`.
[[nodiscard]] std::string_view event_type(const StreamEvent& ev) noexcept;

/// Encodes an event as a JSON object `{"type": …, fields…}`.
[[nodiscard]] boost::json::value to_json(const StreamEvent& ev);

/// Decodes what `to_json` wrote; nullopt for anything else (unknown type, missing field).
[[nodiscard]] std::optional<StreamEvent> event_from_json(const boost::json::value& v);

} // namespace sluice
