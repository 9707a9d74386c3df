// What the search index holds of a transcript row ("indexed text"): prompts, assistant text, tool
// names and inputs, tool results (head and tail of long ones); sans-I/O.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::hub {

/// Bytes of a tool result's head that are indexed. Basis: the lines a person remembers of a long
/// output are its first (the command's echo, the first error) and its last (the summary); the
/// middle of a 10 MB log would cost the index its size for little recall.
inline constexpr std::size_t SEARCH_RESULT_HEAD_BYTES = 8 * 1024;
/// Bytes of a tool result's tail that are indexed (see SEARCH_RESULT_HEAD_BYTES).
inline constexpr std::size_t SEARCH_RESULT_TAIL_BYTES = 4 * 1024;

/// What is indexed of one row.
struct SearchTextOptions {
    bool thinking{false}; ///< index assistant thinking too (off by default: private reasoning)
};

/// The indexed text of a frame row (a transcript or stream-json row): its pieces joined by
/// newlines — a user row's prompt text and tool results (a result longer than head + tail: its
/// first SEARCH_RESULT_HEAD_BYTES and last SEARCH_RESULT_TAIL_BYTES, cut at UTF-8 boundaries);
/// an assistant row's text, tool names and the string values of their inputs (commands, paths,
/// patterns), and its thinking when asked. Empty for rows that are not indexed: meta rows
/// (`isMeta`), system, result and bookkeeping rows (queue operations, last-prompt, summaries).
[[nodiscard]] std::string
indexed_text(const boost::json::object& row, const SearchTextOptions& opt = {});

/// The row's `timestamp` (ISO 8601, UTC) as Unix milliseconds, or 0 when it has none.
[[nodiscard]] std::int64_t row_time_ms(const boost::json::object& row);

/// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS[.mmm]` (UTC) as Unix milliseconds, or none.
[[nodiscard]] std::optional<std::int64_t> parse_time_ms(std::string_view t);

/// `text` as it is indexed when long: its head and tail (with " … " between), else whole.
[[nodiscard]] std::string head_and_tail(std::string_view text);

} // namespace sluice::hub
