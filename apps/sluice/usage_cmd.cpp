// `sluice usage [--by seat|project|model|day]`: tokens and cost from GET /v1/usage, as a table
// (or the hub's JSON with --json).
#include "client.hpp"
#include "commands.hpp"

#include <boost/json.hpp>

#include <CLI/CLI.hpp>

#include <array>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>

namespace sluice::app::client {

using app::on_selected;

namespace json = boost::json;

namespace {

struct UsageFlags {
    std::string by{"seat"};
    std::string since, until, seat;
    bool json{false};
};

std::string cost_text(const json::object& o) {
    const auto& c = o.at("cost_usd");
    if (c.is_null()) {
        return "-"; // some tokens have no known price
    }
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%.2f", c.to_number<double>());
    return buf.data();
}

std::int64_t count(const json::object& o, const char* k) {
    return o.at(k).to_number<std::int64_t>();
}

void print_row(const std::string& key, const json::object& o) {
    std::printf(
        "%-40s %12lld %12lld %14lld %14lld %10s\n",
        key.c_str(),
        static_cast<long long>(count(o, "input_tokens")),
        static_cast<long long>(count(o, "output_tokens")),
        static_cast<long long>(count(o, "cache_read_tokens")),
        static_cast<long long>(count(o, "cache_write_tokens")),
        cost_text(o).c_str());
}

int cmd_usage(const ClientOptions& o, const UsageFlags& f) {
    std::string path = "/v1/usage?group=" + f.by;
    if (!f.since.empty()) {
        path += "&since=" + f.since;
    }
    if (!f.until.empty()) {
        path += "&until=" + f.until;
    }
    if (!f.seat.empty()) {
        path += "&seat=" + f.seat;
    }
    auto v = call(o, "GET", path);
    if (!v) {
        return 1;
    }
    if (f.json) {
        std::printf("%s\n", json::serialize(*v).c_str());
        return 0;
    }
    std::string head = f.by;
    for (auto& c : head) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::printf(
        "%-40s %12s %12s %14s %14s %10s\n",
        head.c_str(),
        "INPUT",
        "OUTPUT",
        "CACHE_READ",
        "CACHE_WRITE",
        "COST_USD");
    for (const auto& r : v->at("rows").as_array()) {
        const auto& ro = r.as_object();
        const auto key = std::string(ro.at("key").as_string());
        print_row(key.empty() ? "(none)" : key, ro);
    }
    print_row("TOTAL", v->at("total").as_object());
    const auto& p = v->at("prices").as_object();
    std::printf(
        "cost: the sessions' own figures, else prices of %s; '-': a model with no known price\n",
        std::string(p.at("date").as_string()).c_str());
    return 0;
}

} // namespace

void add_usage_command(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common) {
    auto* usage =
        app.add_subcommand("usage", "Print tokens and cost per seat, project, model or day");
    common(usage);
    auto f = std::make_shared<UsageFlags>();
    usage->add_option("--by", f->by, "what a row totals")
        ->check(CLI::IsMember({"seat", "project", "model", "day"}));
    usage->add_option("--since", f->since, "first day counted (YYYY-MM-DD, UTC)");
    usage->add_option("--until", f->until, "last day counted (YYYY-MM-DD, UTC)");
    usage->add_option("--seat", f->seat, "only this seat");
    usage->add_flag("--json", f->json, "print the hub's JSON answer");
    on_selected(usage, [o, f] { return cmd_usage(*o, *f); });
}

} // namespace sluice::app::client
