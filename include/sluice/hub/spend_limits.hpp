// SpendLimits: what hosted seats may still spend — each seat's `budget_usd` and the hub's daily
// budget — from the spend each seat keeps in its meta.json, so a restart forgets nothing.
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/error_code.hpp>

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::hub {

/// A seat's spend in USD as its meta.json keeps it: in all, and on its latest day (UTC).
struct SeatSpend {
    double total_usd{}; ///< every counted turn of the seat
    std::string day;    ///< the day (YYYY-MM-DD, UTC) `day_usd` is of; empty: none yet
    double day_usd{};   ///< spent on `day`

    /// Adds `usd` spent on `today`.
    void add(double usd, std::string_view today);

    /// What was spent on `today`.
    [[nodiscard]] double on(std::string_view today) const { return day == today ? day_usd : 0; }
};

/// What one counted turn did to the limits: the seat's spend now, and a notice for a person when
/// it crossed 80 % of a budget (the seat's or the day's).
struct SpendUpdate {
    SeatSpend spend;
    std::optional<std::string> notice;
};

/// The hub's spend limits: a per-day budget over every hosted seat, and each seat's own budget.
/// A seat whose budget is spent (or on a day whose budget is) starts no turn.
///
/// @par Thread safety
/// Safe from any thread (one mutex; no I/O under it). Seats call it from their strands, agents
/// from theirs, the API from its sessions.
class SpendLimits {
public:
    /// `daily_usd`: the hub's budget per day (UTC) over its hosted seats; none: no daily limit.
    explicit SpendLimits(std::optional<double> daily_usd = std::nullopt);

    /// The daily budget, if any.
    [[nodiscard]] std::optional<double> daily_usd() const noexcept { return daily_; }

    /// Records seat `id`'s budget (none: no budget of its own) and its spend: when it opens and
    /// when its budget is changed.
    void note(std::string_view id, std::optional<double> budget_usd, const SeatSpend& spend);

    /// Seat `id` is gone: it has no budget any more, but what it spent on its latest day stays
    /// in that day's spend (`removed`), so removing a seat never reopens the day's budget.
    void forget(std::string_view id);

    /// What removed seats spent on the latest day one of them spent anything (the hub keeps it in
    /// the data dir's `removed_spend.json`, so a restart keeps it too).
    [[nodiscard]] SeatSpend removed() const;

    /// Restores `removed` as kept (at start).
    void note_removed(const SeatSpend& removed);

    /// Seat `id` spent `usd` more on `today` (a counted turn).
    SpendUpdate add(std::string_view id, double usd, std::string_view today);

    /// What every seat spent on `today`.
    [[nodiscard]] double spent_on(std::string_view today) const;

    /// What seat `id` may still spend on `today`: the smaller of what its budget and the day's
    /// leave (≤ 0 when one is spent); none when neither applies.
    [[nodiscard]] std::optional<double> left(std::string_view id, std::string_view today) const;

    /// Why seat `id` may start no turn on `today` (a budget is spent, named with its figures and
    /// the setting that raises it), or nothing.
    [[nodiscard]] std::optional<std::string>
    refusal(std::string_view id, std::string_view today) const;

private:
    struct Entry {
        std::optional<double> budget;
        SeatSpend spend;
    };

    [[nodiscard]] double spent_on_locked(std::string_view today) const;

    std::optional<double> daily_;
    mutable std::mutex mu_;
    std::map<std::string, Entry, std::less<>> seats_;
    SeatSpend removed_; // removed seats' spend of its latest day
};

/// Reads what removed seats spent (`removed_spend.json`: {"day","usd"}); none when the file is
/// missing or damaged (said in the log: a damaged file only loses that day's removed spend).
[[nodiscard]] SeatSpend read_removed_spend(const std::filesystem::path& file);

/// Keeps `removed` in `file` (safe_write: whole or not at all). Blocking: the hub's writer.
[[nodiscard]] boost::system::error_code
write_removed_spend(const std::filesystem::path& file, const SeatSpend& removed);

/// `usd` for a person: "$1.45" (cents; "$0.004" below a cent).
[[nodiscard]] std::string usd_text(double usd);

/// What is left of a budget as Claude Code's `--max-budget-usd` takes it ("0.55"; never below
/// a hundredth of a cent, which it would refuse as no budget).
[[nodiscard]] std::string max_budget_arg(double left);

/// The `system` `notice` row seat `seat` appends after the turn that crossed 80 % of a budget:
/// `text` (SpendUpdate::notice), and the seat's spend and budget (none: only the day's applies).
[[nodiscard]] boost::json::object budget_notice_row(
    std::string_view seat,
    const std::string& text,
    double spent_usd,
    std::optional<double> budget_usd);

} // namespace sluice::hub
