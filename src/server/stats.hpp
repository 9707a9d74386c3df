// The hub's figures, named once for /v1/stats (JSON) and /metrics (Prometheus text).
#pragma once

#include "counters.hpp"

#include <sluice/hub/hub.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>

namespace sluice::server {

/// /v1/stats: every hub-wide figure (relay figures under "relay"). Safe from any thread.
/// `connections`: the connections open now.
boost::json::object
stats_json(const hub::Hub& seats, const Counters& counters, std::size_t connections);

/// /metrics: the same figures as `sluice_<name>` in Prometheus text, with the let-go,
/// overload and accept back-off counters. Safe from any thread.
std::string metrics_text(const hub::Hub& seats, const Counters& counters, std::size_t connections);

} // namespace sluice::server
