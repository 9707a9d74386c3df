// GET /v1/usage (the ledger's totals, grouped) and the usage lines of /metrics.
#include "api_detail.hpp"
#include "stats.hpp"

#include <sluice/hub/seat.hpp>
#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace sluice::server {

namespace json = boost::json;

namespace {

bool is_day(std::string_view d) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    return d.size() == 10 && d[4] == '-' && d[7] == '-'
           && std::all_of(d.begin(), d.begin() + 4, digit) && digit(d[5]) && digit(d[6])
           && digit(d[8]) && digit(d[9]);
}

json::object sums_json(const hub::UsageSums& s) {
    json::object o{
        {"input_tokens", s.tokens.input},
        {"output_tokens", s.tokens.output},
        {"cache_read_tokens", s.tokens.cache_read},
        {"cache_write_tokens", s.tokens.cache_write},
        {"total_tokens", s.tokens.total()}};
    const auto cost = s.cost();
    o["cost_usd"] = cost ? json::value(*cost) : json::value(nullptr);
    if (s.unpriced_tokens > 0) {
        o["unpriced_tokens"] = s.unpriced_tokens;
        json::array models;
        for (const auto& m : s.unpriced_models) {
            models.emplace_back(m);
        }
        o["unpriced_models"] = std::move(models);
    }
    return o;
}

} // namespace

namespace api_detail {

Response usage_response(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
        return method_not_allowed(req, "GET");
    }
    const auto group_name = query_param(url, "group").value_or("seat");
    hub::UsageGroup group{};
    if (group_name == "seat") {
        group = hub::UsageGroup::seat;
    } else if (group_name == "project") {
        group = hub::UsageGroup::project;
    } else if (group_name == "model") {
        group = hub::UsageGroup::model;
    } else if (group_name == "day") {
        group = hub::UsageGroup::day;
    } else {
        return bad(req, R"(query 'group' must be "seat", "project", "model" or "day")");
    }
    const auto since = query_param(url, "since").value_or("");
    const auto until = query_param(url, "until").value_or("");
    if ((!since.empty() && !is_day(since)) || (!until.empty() && !is_day(until))) {
        return bad(req, "queries 'since' and 'until' are days: YYYY-MM-DD (UTC)");
    }
    const auto seat = query_param(url, "seat");
    const auto& ledger = *s.hub.usage();
    json::array rows;
    hub::UsageSums total;
    for (const auto& r : ledger.query(
             group, since, until, seat ? std::optional<std::string_view>(*seat) : std::nullopt)) {
        auto o = sums_json(r.sums);
        o.emplace("key", r.key);
        rows.push_back(std::move(o));
        total.tokens += r.sums.tokens;
        total.cost_usd += r.sums.cost_usd;
        total.unpriced_tokens += r.sums.unpriced_tokens;
        total.unpriced_models.insert(r.sums.unpriced_models.begin(), r.sums.unpriced_models.end());
    }
    const auto& prices = *ledger.prices();
    json::object body{
        {"group", group_name},
        {"since", since.empty() ? json::value(nullptr) : json::value(since)},
        {"until", until.empty() ? json::value(nullptr) : json::value(until)},
        {"rows", std::move(rows)},
        {"total", sums_json(total)},
        {"prices", json::object{{"date", prices.date()}, {"source", prices.source()}}}};
    if (seat) {
        // One seat's figures only (what a viewer token of that seat may ask): its own budget
        // and spend, never the hub's (other seats' spend is not its business).
        const auto found = s.hub.find(*seat);
        const auto sum = found ? std::optional<hub::SeatSummary>(found->summary()) : std::nullopt;
        const bool hosted = sum && sum->source.empty();
        body["budget"] = json::object{
            {"budget_usd", hosted && sum->budget_usd ? json::value(*sum->budget_usd) : nullptr},
            {"spent_usd", hosted ? json::value(sum->spent_usd) : json::value(nullptr)}};
    } else {
        // The hub's budget for today (UTC) over its seats, and what they spent of it.
        const auto& limits = *s.hub.limits();
        const auto daily = limits.daily_usd();
        body["budget"] = json::object{
            {"daily_usd", daily ? json::value(*daily) : json::value(nullptr)},
            {"spent_today_usd", limits.spent_on(hub::utc_day_now())}};
    }
    return json_response(req, 200, json::serialize(body));
}

} // namespace api_detail

void usage_metrics(std::string& out, const hub::UsageLedger& ledger) {
    const auto by_model = ledger.query(hub::UsageGroup::model);
    out += "# HELP sluice_tokens_total Tokens the hub's sessions used, by kind and model.\n"
           "# TYPE sluice_tokens_total counter\n";
    for (const auto& r : by_model) {
        const auto m = label_value(r.key);
        const auto line = [&](const char* kind, std::int64_t v) {
            out += "sluice_tokens_total{kind=\"";
            out += kind;
            out += "\",model=\"" + m + "\"} " + std::to_string(v) + '\n';
        };
        line("input", r.sums.tokens.input);
        line("output", r.sums.tokens.output);
        line("cache_read", r.sums.tokens.cache_read);
        line("cache_write", r.sums.tokens.cache_write);
    }
    out += "# HELP sluice_cost_usd_total What the hub's sessions cost in USD, by model (models "
           "with no known price are left out).\n"
           "# TYPE sluice_cost_usd_total counter\n";
    for (const auto& r : by_model) {
        if (const auto cost = r.sums.cost()) {
            out += "sluice_cost_usd_total{model=\"" + label_value(r.key) + "\"} " + sample(*cost)
                   + '\n';
        }
    }
}

} // namespace sluice::server
