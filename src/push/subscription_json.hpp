// A push subscription as JSON: how the data dir's file and a cluster's Redis hash both keep one.
// Private to src/push; pure.
#pragma once

#include <sluice/push/sender.hpp>

#include <boost/json/object.hpp>

#include <optional>

namespace sluice::push {

/// `s` as stored (with its secrets: only for the file and Redis, never an answer).
[[nodiscard]] boost::json::object subscription_json(const Subscription& s);

/// A stored subscription read back; nothing when it lacks an id or its keys do not check.
[[nodiscard]] std::optional<Subscription> subscription_from_json(const boost::json::object& o);

} // namespace sluice::push
