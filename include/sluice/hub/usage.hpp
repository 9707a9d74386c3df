// Usage counting, sans-I/O: the price table, Claude Code session lines counted as ccusage counts
// them (one assistant message once), and the usage figures of a hosted seat's `result` rows.
#pragma once

#include <boost/json/fwd.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::hub {

/// Messages a ClaudeUsageCounter remembers for de-duplication while it reads. Basis: Claude Code
/// writes the rows of one message (one per content block, the last with the final
/// `output_tokens`) next to each other, a few tool results apart at most; a copy further than
/// this many other messages away counts twice (none does in any fixture).
inline constexpr std::size_t USAGE_DEDUP_WINDOW = 1024;
/// Messages it keeps once a file is read to its end (a message still being written is the last
/// one or two): what an idle session costs, ~16 × 200 B.
inline constexpr std::size_t USAGE_DEDUP_IDLE = 16;

/// Token counts by kind. Signed: a delta may take back what a replaced row had added.
struct UsageTokens {
    std::int64_t input{};       ///< uncached input tokens
    std::int64_t output{};      ///< output tokens
    std::int64_t cache_read{};  ///< input tokens read from the prompt cache
    std::int64_t cache_write{}; ///< input tokens written to the prompt cache (5 min and 1 h)

    /// All four.
    [[nodiscard]] std::int64_t total() const noexcept {
        return input + output + cache_read + cache_write;
    }

    UsageTokens& operator+=(const UsageTokens& o) noexcept;
    UsageTokens& operator-=(const UsageTokens& o) noexcept;
};

/// One change to a ledger cell (a seat's model on a day): tokens, and what they cost.
struct UsageDelta {
    std::string day;                ///< `YYYY-MM-DD`, UTC
    std::string model;              ///< "" when the source names none
    UsageTokens tokens;             ///< tokens by kind
    double cost_usd{};              ///< the cost of the priced tokens
    std::int64_t unpriced_tokens{}; ///< tokens with no known price (their cost is unknown)
};

/// What one model's tokens cost, USD per token (LiteLLM's field names in the JSON).
struct ModelPrice {
    double input{};                          ///< input_cost_per_token
    double output{};                         ///< output_cost_per_token
    double cache_write{};                    ///< cache_creation_input_token_cost (a 5-minute write)
    double cache_read{};                     ///< cache_read_input_token_cost
    std::optional<double> cache_write_1h;    ///< cache_creation_input_token_cost_above_1hr
    std::optional<double> input_above_200k;  ///< *_above_200k_tokens: beyond 200,000
    std::optional<double> output_above_200k; ///< tokens of one bucket in one message
    std::optional<double> cache_write_above_200k; ///< (the marginal rate ccusage applies)
    std::optional<double> cache_read_above_200k;  ///<
};

/// Tokens of one message as a source reports them, with the 1-hour part of its cache writes.
struct MessageTokens {
    UsageTokens tokens;            ///< by kind
    std::int64_t cache_write_1h{}; ///< of `tokens.cache_write`, those written for an hour
};

/// A dated price table: model → price. Loaded from JSON `{"date", "source", "models": {name:
/// {input_cost_per_token, …}}}`; the shipped default is `src/hub/prices.json`.
///
/// @par Thread safety
/// Immutable after construction: safe to share.
class PriceTable {
public:
    /// Parses a table. @return it, or why it is not one (the field at fault).
    static boost::system::result<PriceTable> parse(std::string_view json, std::string& why);

    /// Reads and parses the table in `file` (start-up: a blocking read). @return it, or null and
    /// why (the file and what is wrong in it).
    static std::shared_ptr<const PriceTable>
    load(const std::filesystem::path& file, std::string& why);

    /// The table shipped in the binary (src/hub/prices.json).
    static std::shared_ptr<const PriceTable> shipped();

    /// The price of `model` (its exact name, or with an `anthropic/` prefix dropped), or none.
    [[nodiscard]] const ModelPrice* find(std::string_view model) const;

    /// What `t` costs at `model`'s price (1-hour cache writes at cache_write_1h, else twice the
    /// input price; 5-minute ones at cache_write), or none when the model has no price.
    [[nodiscard]] std::optional<double> cost(std::string_view model, const MessageTokens& t) const;

    /// The table's date and source, as it names them.
    [[nodiscard]] const std::string& date() const noexcept { return date_; }

    /// Where its figures come from.
    [[nodiscard]] const std::string& source() const noexcept { return source_; }

private:
    std::string date_, source_;
    std::map<std::string, ModelPrice, std::less<>> models_;
};

/// The deltas of one priced message: `tokens` of `model` on `day`, at `cost` when the source
/// gave one, else at the table's price, else unpriced (a message with no tokens is never).
UsageDelta priced(
    std::string day,
    std::string model,
    const MessageTokens& tokens,
    std::optional<double> cost,
    const PriceTable& prices);

/// The usage figures of a hosted seat's `result` row (a claude seat's: `modelUsage` per model,
/// each with its `costUSD`, else `usage` and `total_cost_usd`; a builtin seat's: `usage` and
/// `model`), dated `day`; `model` names the model when the row does not. Empty for other rows.
std::vector<UsageDelta> usage_of_result_row(
    const boost::json::object& row,
    std::string_view model,
    const std::string& day,
    const PriceTable& prices);

/// Today's date, UTC, as `YYYY-MM-DD`.
std::string utc_day_now();

/// Counts the lines of one Claude Code session (its own file and its sub-agents' files) as
/// ccusage 20.0.24 counts them: lines with a `message.usage` object (and a parsable timestamp,
/// no empty id fields, no `null` in the fields ccusage requires), one message once per
/// (`message.id`, `requestId`, session): of its rows the one with the most tokens wins (the
/// last of Claude Code's streamed rows; a tie keeps the first), a main-thread row wins over a
/// sidechain replay of it (same message id and timestamp); sidechain rows count toward the
/// session. Cost: the row's `costUSD`, else the price table's.
///
/// Memory: at most USAGE_DEDUP_WINDOW messages remembered (trim() after a file's end).
///
/// @par Thread safety
/// Not thread-safe: one owner (the scanner's thread).
class ClaudeUsageCounter {
public:
    /// A counter for session `session_id`, priced from `prices`.
    ClaudeUsageCounter(std::shared_ptr<const PriceTable> prices, std::string session_id);

    /// One line (without its newline); appends the deltas it makes (none, or one) to `out`.
    void line(std::string_view text, std::vector<UsageDelta>& out);

    /// Forgets all but the newest `keep` messages.
    void trim(std::size_t keep);

    /// Messages remembered now.
    [[nodiscard]] std::size_t remembered() const noexcept { return order_.size(); }

private:
    struct Seen {
        std::string key; // message id and session
        std::optional<std::string> request_id;
        std::string timestamp;
        bool sidechain{};
        std::int64_t total{};
        UsageDelta counted; // what it added
    };

    void forget_oldest();

    std::shared_ptr<const PriceTable> prices_;
    std::string session_id_;
    std::list<Seen> order_; // oldest first
    std::unordered_map<std::string, std::vector<std::list<Seen>::iterator>> by_key_;
};

/// Whether a usage line has `"<field>":null` for a field ccusage requires non-null anywhere in it
/// (`id`, `cwd`, `model`, `speed`, `costUSD`, `version`, `sessionId`, `requestId`,
/// `isApiErrorMessage`, `cache_read_input_tokens`, `cache_creation_input_tokens`): such a line is
/// skipped, as ccusage skips it.
bool has_refused_null(std::string_view line);

} // namespace sluice::hub
