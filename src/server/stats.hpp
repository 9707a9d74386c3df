// The hub's figures, named once for /v1/stats (JSON) and /metrics (Prometheus text).
#pragma once

#include "impl.hpp"

#include <boost/json/object.hpp>

#include <string>

namespace sluice::server {

/// /v1/stats: every hub-wide figure (relay figures under "relay"). Safe from any thread.
boost::json::object stats_json(const Server::Impl& s);

/// /metrics: the same figures as `sluice_<name>` in Prometheus text, with the let-go,
/// overload and accept back-off counters. Safe from any thread.
std::string metrics_text(const Server::Impl& s);

} // namespace sluice::server
