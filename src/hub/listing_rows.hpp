// The listing's row reader: the few fields a session listing and the turn scan read from one
// JSONL row, taken by a SAX pass (no DOM of the row: tool results, thinking, usage are skipped).
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string_view>

namespace sluice::hub {

/// Reads `line` (one JSONL row) and returns a small object holding only what the listing and
/// the turn scan read of it, with the row's own values: top-level `type`, `cwd`, `isSidechain`,
/// `parent_tool_use_id`, `isMeta`, `isCompactSummary`, `subtype`, `customTitle`, `aiTitle`,
/// `summary`, and `message.content` (a string, or its blocks with only `type`, `text`,
/// `tool_use_id`, `name`, `id`; a block that is not an object kept as null). Fields of another
/// JSON kind are kept as null, where the readers (`str_at`, `true_at`) see what they would see
/// in the whole row: no string, not true. Duplicate keys: the last wins, as in a DOM parse.
/// @return nullopt where `Frame::parse` fails (not JSON, extra bytes, not an object).
[[nodiscard]] std::optional<boost::json::object> read_listing_row(std::string_view line);

/// Feeds a row `read_listing_row` read to `scan` as the turn scan sees its frame (a row that is
/// no frame is not fed). @return its frame when it opens a turn, else null.
FramePtr feed_turn_scan(boost::json::object row, TurnScan& scan);

} // namespace sluice::hub
