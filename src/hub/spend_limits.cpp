// SpendLimits: each seat's budget and the hub's daily budget (hub/spend_limits.hpp).
#include "ids.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/hub/spend_limits.hpp>

#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace sluice::hub {

namespace {

// A notice goes out once a budget is this far spent.
constexpr double WARN_AT = 0.8;

bool crossed(double before, double after, double budget) {
    return before < WARN_AT * budget && after >= WARN_AT * budget;
}

} // namespace

void SeatSpend::add(double usd, std::string_view today) {
    total_usd += usd;
    if (day != today) {
        day = std::string(today);
        day_usd = 0;
    }
    day_usd += usd;
}

std::string usd_text(double usd) {
    std::array<char, 48> buf{};
    std::snprintf(buf.data(), buf.size(), usd > 0 && usd < 0.01 ? "$%.3f" : "$%.2f", usd);
    return buf.data();
}

std::string max_budget_arg(double left) {
    std::array<char, 48> buf{};
    std::snprintf(buf.data(), buf.size(), "%.4f", std::max(left, 0.0001));
    return buf.data();
}

SpendLimits::SpendLimits(std::optional<double> daily_usd)
    : daily_(daily_usd) {
}

void SpendLimits::note(
    std::string_view id, std::optional<double> budget_usd, const SeatSpend& spend) {
    std::lock_guard lock(mu_);
    auto& e = seats_[std::string(id)];
    e.budget = budget_usd;
    e.spend = spend;
}

void SpendLimits::forget(std::string_view id) {
    std::lock_guard lock(mu_);
    auto it = seats_.find(id);
    if (it == seats_.end()) {
        return;
    }
    const auto& spent = it->second.spend;
    if (!spent.day.empty() && spent.day_usd > 0 && spent.day >= removed_.day) {
        removed_.add(spent.day_usd, spent.day); // a later day starts the count anew
    }
    seats_.erase(it);
}

SeatSpend SpendLimits::removed() const {
    std::lock_guard lock(mu_);
    return removed_;
}

void SpendLimits::note_removed(const SeatSpend& removed) {
    std::lock_guard lock(mu_);
    removed_ = removed;
}

double SpendLimits::spent_on_locked(std::string_view today) const {
    double sum = removed_.on(today);
    for (const auto& [id, e] : seats_) {
        sum += e.spend.on(today);
    }
    return sum;
}

double SpendLimits::spent_on(std::string_view today) const {
    std::lock_guard lock(mu_);
    return spent_on_locked(today);
}

SpendUpdate SpendLimits::add(std::string_view id, double usd, std::string_view today) {
    std::lock_guard lock(mu_);
    const double day_before = spent_on_locked(today);
    auto& e = seats_[std::string(id)];
    const double seat_before = e.spend.total_usd;
    e.spend.add(usd, today);
    SpendUpdate u{e.spend, std::nullopt};
    if (e.budget && crossed(seat_before, e.spend.total_usd, *e.budget)) {
        u.notice = usd_text(e.spend.total_usd) + " of this seat's budget of " + usd_text(*e.budget)
                   + " spent (80 % reached; budget_usd raises it)";
    } else if (daily_ && crossed(day_before, day_before + usd, *daily_)) {
        u.notice = usd_text(day_before + usd) + " of the hub's budget of " + usd_text(*daily_)
                   + " for today spent (80 % reached; daily_budget_usd raises it)";
    }
    return u;
}

std::optional<double> SpendLimits::left(std::string_view id, std::string_view today) const {
    std::lock_guard lock(mu_);
    std::optional<double> out;
    if (daily_) {
        out = *daily_ - spent_on_locked(today);
    }
    if (auto it = seats_.find(id); it != seats_.end() && it->second.budget) {
        const double seat_left = *it->second.budget - it->second.spend.total_usd;
        out = out ? std::min(*out, seat_left) : seat_left;
    }
    return out;
}

std::optional<std::string> SpendLimits::refusal(std::string_view id, std::string_view today) const {
    std::lock_guard lock(mu_);
    if (auto it = seats_.find(id); it != seats_.end() && it->second.budget
                                   && it->second.spend.total_usd >= *it->second.budget) {
        return "this seat's budget is spent: " + usd_text(it->second.spend.total_usd) + " of "
               + usd_text(*it->second.budget) + " (raise budget_usd with PATCH to go on)";
    }
    if (daily_) {
        if (const double spent = spent_on_locked(today); spent >= *daily_) {
            return "the hub's budget for today (UTC) is spent: " + usd_text(spent) + " of "
                   + usd_text(*daily_) + " (daily_budget_usd in the config raises it)";
        }
    }
    return std::nullopt;
}

boost::json::object budget_notice_row(
    std::string_view seat,
    const std::string& text,
    double spent_usd,
    std::optional<double> budget_usd) {
    return boost::json::object{
        {"type", "system"},
        {"subtype", "notice"},
        {"text", text},
        {"budget",
         boost::json::object{
             {"spent_usd", spent_usd},
             {"budget_usd",
              budget_usd ? boost::json::value(*budget_usd) : boost::json::value(nullptr)}}},
        {"session_id", seat},
        {"uuid", new_id("n")},
        {"timestamp", iso_now()}};
}

} // namespace sluice::hub

namespace sluice::hub {

SeatSpend read_removed_spend(const std::filesystem::path& file) {
    SeatSpend out;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return out;
    }
    try {
        std::ifstream in(file);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto v = boost::json::parse(text).as_object();
        const auto& day = v.at("day").as_string();
        const double usd = v.at("usd").to_number<double>();
        if (day.size() == 10 && usd >= 0) {
            out.day = std::string(day);
            out.day_usd = usd;
            out.total_usd = usd;
            return out;
        }
        spdlog::warn("{}: not a day and an amount: ignored", file.string());
    } catch (const std::exception& e) {
        spdlog::warn(
            "{} is damaged ({}): removed seats' spend today is not counted",
            file.string(),
            e.what());
    }
    return out;
}

boost::system::error_code
write_removed_spend(const std::filesystem::path& file, const SeatSpend& removed) {
    const auto body =
        boost::json::serialize(boost::json::object{{"day", removed.day}, {"usd", removed.day_usd}})
        + "\n";
    if (auto r = safe_write(file, body); !r) {
        spdlog::error(
            "cannot keep removed seats' spend in {}: {}", file.string(), r.error().message());
        return r.error();
    }
    return {};
}

} // namespace sluice::hub
