// UsageLedger: the hub's usage totals per seat, day and model (aggregates, never rows), and the
// answers GET /v1/usage and /metrics read from them.
#pragma once

#include <sluice/conversation/frame.hpp>
#include <sluice/hub/usage.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace sluice::hub {

/// What a ledger holds per cell, and answers per group.
struct UsageSums {
    UsageTokens tokens;                    ///< by kind
    double cost_usd{};                     ///< of the priced tokens
    std::int64_t unpriced_tokens{};        ///< tokens of models with no known price
    std::set<std::string> unpriced_models; ///< which (in an answer; "" when none was named)

    /// The cost, or none when some tokens have no known price: never a partial figure as a total.
    [[nodiscard]] std::optional<double> cost() const {
        return unpriced_tokens > 0 ? std::nullopt : std::optional<double>(cost_usd);
    }
};

/// How GET /v1/usage groups.
enum class UsageGroup : std::uint8_t { seat, project, model, day };

/// One answer row: the group's key and its sums.
struct UsageRow {
    std::string key; ///< the seat id, project, model or day
    UsageSums sums;  ///< its totals
};

/// The hub's usage totals: one cell per (seat, day, model), so its size grows with seats × days ×
/// models, never with the rows or turns read.
///
/// @par Thread safety
/// Safe from any thread (one mutex; no I/O under it).
class UsageLedger {
public:
    /// A ledger pricing with `prices` (the shipped table when null).
    explicit UsageLedger(std::shared_ptr<const PriceTable> prices = nullptr);

    /// The price table sources without a cost of their own are priced from.
    [[nodiscard]] const std::shared_ptr<const PriceTable>& prices() const noexcept {
        return prices_;
    }

    /// Adds `d` (its figures may be negative: a replaced row taken back) to seat `seat`.
    void add(std::string_view seat, const UsageDelta& d);

    /// Names `seat`'s project (its working directory), for group=project.
    void set_project(std::string_view seat, std::string project);

    /// Totals grouped by `group`, of days in [`since`, `until`] (`YYYY-MM-DD`, empty: open), of
    /// seat `seat` only when given; sorted by key. Cells that sum to nothing are left out.
    [[nodiscard]] std::vector<UsageRow> query(
        UsageGroup group,
        std::string_view since = {},
        std::string_view until = {},
        std::optional<std::string_view> seat = std::nullopt) const;

    /// Cells held now (what the ledger costs in memory).
    [[nodiscard]] std::size_t cells() const;

private:
    std::shared_ptr<const PriceTable> prices_;
    mutable std::mutex mu_;
    // (seat, day, model) → sums
    std::map<std::tuple<std::string, std::string, std::string>, UsageSums, std::less<>> cells_;
    std::map<std::string, std::string, std::less<>> projects_; // seat → project
};

/// Counts frame `f` of hosted seat `seat` into `ledger` when it is a `result` row with usage
/// (usage_of_result_row, dated today; `model` names the model when the row does not; `cwd`, when
/// not empty, is the seat's project). Nothing for other frames or a null ledger.
/// @return what the row cost in USD (its priced part; 0 for other frames or a null ledger).
double count_result_frame(
    UsageLedger* ledger,
    std::string_view seat,
    std::string_view model,
    std::string_view cwd,
    const Frame& f);

} // namespace sluice::hub
