// The hub's figures, named once for /v1/stats (JSON) and /metrics (Prometheus text).
#pragma once

#include "counters.hpp"

#include <sluice/hub/hub.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::server {

/// A label value in Prometheus' text format: backslash, double quote and newline escaped.
std::string label_value(std::string_view v);

/// A float sample value: integers without a fraction, others to 15 significant digits.
std::string sample(double v);

/// /v1/stats: every hub-wide figure (relay figures under "relay"). Safe from any thread.
/// `connections`: the connections open now.
boost::json::object
stats_json(const hub::Hub& seats, const Counters& counters, std::size_t connections);

/// /metrics: the same figures as `sluice_<name>` in Prometheus text, with the let-go,
/// overload and accept back-off counters. Safe from any thread.
std::string metrics_text(const hub::Hub& seats, const Counters& counters, std::size_t connections);

/// /metrics: `sluice_tokens_total{kind,model}` and `sluice_cost_usd_total{model}` from the usage
/// ledger (usage_api.cpp).
void usage_metrics(std::string& out, const hub::UsageLedger& ledger);

} // namespace sluice::server
