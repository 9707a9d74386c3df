// The one validator of client operations (`send`, `more`, `answer`) shared by HTTP and WebSocket.
#pragma once

#include <sluice/hub/failure.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::server {

/// A client mistake: the error (a 4xx, through `http_status`) and a message naming the field
/// and the limit — the hub's Failure, so every refusal has one shape.
using Refusal = hub::Failure;

/// A prompt to send, validated.
struct SendOp {
    std::string text; ///< non-empty
};

/// A request for an older page, validated.
struct MoreOp {
    std::optional<std::uint64_t> before; ///< a frame position; empty: the newest page
    std::size_t turns{};                 ///< 1..SUBSCRIBE_TURNS
};

/// An answer to a permission prompt, validated.
struct AnswerOp {
    runtime::PermissionAnswer answer; ///< request id, allow/deny, message, updated input
    std::string by;                   ///< who answered (default "api"), at most 200 bytes
};

/// Validates an `answer`: `behavior` "allow" | "deny", optional string `message` and `by`,
/// optional object `updated_input`; `request_id` from the URL (HTTP) or the body (WebSocket).
/// @param request_id the request answered (non-empty)
[[nodiscard]] std::optional<Refusal>
validate_answer(const boost::json::object& body, std::string request_id, AnswerOp& out);

/// A PATCH of a seat, validated: what to change (at least one field).
struct SeatChange {
    std::optional<std::string> name;  ///< a new name
    runtime::AgentSettings settings;  ///< a claude seat's permission mode and model
    bool budget_given{false};         ///< `budget_usd` was given (null: the budget is removed)
    std::optional<double> budget_usd; ///< the new budget, when given and not null
};

/// Validates a seat PATCH: `{"name"?, "permission_mode"?, "model"?, "budget_usd"?}` (strings;
/// the budget an amount ≥ 0 or null), at least one; any other field is refused (it cannot be
/// changed).
[[nodiscard]] std::optional<Refusal>
validate_seat_change(const boost::json::object& body, SeatChange& out);

/// Validates a `send`: `{"text": <non-empty string>, …}`.
/// @param body the request's JSON object (HTTP body or WebSocket message)
/// @param out  filled when valid
/// @return nothing when valid, else why not
[[nodiscard]] std::optional<Refusal> validate_send(const boost::json::object& body, SendOp& out);

/// Validates a `more`: `before` (absent/null, or a non-negative integer position) and `turns`
/// (absent/null: SUBSCRIBE_TURNS, else an integer from 1 to SUBSCRIBE_TURNS).
/// @param before the `before` value, or nullptr when absent
/// @param turns  the `turns` value, or nullptr when absent
/// @param out    filled when valid
/// @return nothing when valid, else why not
[[nodiscard]] std::optional<Refusal>
validate_more(const boost::json::value* before, const boost::json::value* turns, MoreOp& out);

/// A query-string parameter as the JSON value `validate_more` takes: an unsigned integer when
/// it is one in decimal, else the string itself (which the validator then refuses by name).
[[nodiscard]] boost::json::value query_value(std::string_view text);

/// A byte range of a resource, validated: [first, first + length).
struct ByteRange {
    std::uint64_t first{};  ///< the first byte
    std::uint64_t length{}; ///< bytes, at least 1
};

/// Parses a `Range` header (one range only: `bytes=a-b`, `bytes=a-`, `bytes=-n`) against a
/// resource of `size` bytes (RFC 9110 §14.1.2).
/// @return nothing for an empty header (the whole resource); a range; or a Refusal
///   (errc::bad_request; `unsatisfiable` set when the range does not overlap: HTTP 416).
[[nodiscard]] std::optional<ByteRange> parse_range(
    std::string_view header,
    std::uint64_t size,
    std::optional<Refusal>& refused,
    bool& unsatisfiable);

} // namespace sluice::server
