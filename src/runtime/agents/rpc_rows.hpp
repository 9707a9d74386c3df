// What the JSON-RPC agents (codex, acp) share: field readers of their messages, the tool result
// row they both write, and the reading of one message line.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::runtime::detail {

/// The integer at `key` of `o` (a double truncated), 0 when absent or not a number.
[[nodiscard]] std::int64_t int_field(const boost::json::object& o, std::string_view key) noexcept;

/// The object at `key` of `o`, nullptr when absent or not an object.
[[nodiscard]] const boost::json::object*
object_field(const boost::json::object& o, std::string_view key) noexcept;

/// The array at `key` of `o`, nullptr when absent or not an array.
[[nodiscard]] const boost::json::array*
array_field(const boost::json::object& o, std::string_view key) noexcept;

/// A `user` row holding one `tool_result` block for tool call `id`.
[[nodiscard]] boost::json::object
tool_result_row(std::string id, std::string content, bool is_error);

/// One line from a JSON-RPC peer, read: a request to us (`method` and `id`), a notification
/// (`method` only) or an answer to one of our requests (an integer `id`, with its `result`
/// object or its `error` text).
struct RpcLine {
    enum class Kind { blank, request, notification, answer, other } kind{Kind::other};
    std::string_view method;                    ///< request, notification
    const boost::json::value* id{nullptr};      ///< request
    std::int64_t answer_id{0};                  ///< answer
    const boost::json::object* params{nullptr}; ///< request, notification: never null
    const boost::json::object* result{nullptr}; ///< answer: never null (empty when none)
    std::string error; ///< answer: its error's message ("" when it succeeded)
};

/// Reads `line` (as LineProcess parsed it; it must outlive the answer). nullopt-like: when the
/// line is not a JSON object (`malformed`, or another JSON value), `bad` is set to what a person
/// is shown of it (at most 200 bytes) and the kind is `other`.
[[nodiscard]] RpcLine
read_rpc_line(const boost::json::value& line, bool malformed, std::string& bad);

} // namespace sluice::runtime::detail
