// UsageLedger: usage totals per seat, day and model (hub/usage_ledger.hpp).
#include <sluice/hub/usage_ledger.hpp>

namespace sluice::hub {

UsageLedger::UsageLedger(std::shared_ptr<const PriceTable> prices)
    : prices_(prices ? std::move(prices) : PriceTable::shipped()) {
}

void UsageLedger::add(std::string_view seat, const UsageDelta& d) {
    std::lock_guard lock(mu_);
    auto key = std::make_tuple(std::string(seat), d.day, d.model);
    auto it = cells_.find(key);
    if (it == cells_.end()) {
        it = cells_.emplace(std::move(key), UsageSums{}).first;
    }
    auto& s = it->second;
    s.tokens += d.tokens;
    s.cost_usd += d.cost_usd;
    s.unpriced_tokens += d.unpriced_tokens;
    if (s.tokens.total() == 0 && s.unpriced_tokens == 0 && s.cost_usd == 0) {
        cells_.erase(it); // taken back whole
    }
}

void UsageLedger::set_project(std::string_view seat, std::string project) {
    std::lock_guard lock(mu_);
    projects_[std::string(seat)] = std::move(project);
}

std::vector<UsageRow> UsageLedger::query(
    UsageGroup group,
    std::string_view since,
    std::string_view until,
    std::optional<std::string_view> seat) const {
    std::map<std::string, UsageSums, std::less<>> groups;
    {
        std::lock_guard lock(mu_);
        for (const auto& [key, sums] : cells_) {
            const auto& [cell_seat, day, model] = key;
            if ((seat && cell_seat != *seat) || (!since.empty() && day < since)
                || (!until.empty() && day > until)) {
                continue;
            }
            std::string g;
            switch (group) {
            case UsageGroup::seat:
                g = cell_seat;
                break;
            case UsageGroup::project:
                if (auto p = projects_.find(cell_seat); p != projects_.end()) {
                    g = p->second;
                }
                break;
            case UsageGroup::model:
                g = model;
                break;
            case UsageGroup::day:
                g = day;
                break;
            }
            auto& out = groups[g];
            out.tokens += sums.tokens;
            out.cost_usd += sums.cost_usd;
            out.unpriced_tokens += sums.unpriced_tokens;
            if (sums.unpriced_tokens > 0) {
                out.unpriced_models.insert(model);
            }
        }
    }
    std::vector<UsageRow> rows;
    rows.reserve(groups.size());
    for (auto& [k, s] : groups) {
        rows.push_back(UsageRow{k, std::move(s)});
    }
    return rows;
}

std::size_t UsageLedger::cells() const {
    std::lock_guard lock(mu_);
    return cells_.size();
}

double count_result_frame(
    UsageLedger* ledger,
    std::string_view seat,
    std::string_view model,
    std::string_view cwd,
    const Frame& f) {
    if (ledger == nullptr || f.type() != "result") {
        return 0;
    }
    const auto deltas = usage_of_result_row(f.row(), model, utc_day_now(), *ledger->prices());
    double cost = 0;
    for (const auto& d : deltas) {
        ledger->add(seat, d);
        cost += d.cost_usd;
    }
    if (!deltas.empty() && !cwd.empty()) {
        ledger->set_project(seat, std::string(cwd));
    }
    return cost;
}

} // namespace sluice::hub
