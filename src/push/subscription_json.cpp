// A push subscription as JSON (subscription_json.hpp).
#include "subscription_json.hpp"

#include <boost/json.hpp>

namespace sluice::push {

namespace json = boost::json;

json::object subscription_json(const Subscription& s) {
    return json::object{
        {"id", s.id},
        {"endpoint", s.endpoint},
        {"p256dh", s.p256dh},
        {"auth", s.auth},
        {"owner", s.owner},
        {"seat", s.seat},
        {"viewer", s.viewer},
        {"created", s.created}};
}

std::optional<Subscription> subscription_from_json(const json::object& o) {
    auto str = [&o](std::string_view k) {
        const auto* x = o.if_contains(k);
        return x != nullptr && x->is_string() ? std::string(x->get_string()) : std::string();
    };
    Subscription s;
    if (!check_subscription(str("endpoint"), str("p256dh"), str("auth"), s)) {
        return std::nullopt;
    }
    s.id = str("id");
    s.owner = str("owner");
    s.seat = str("seat");
    const auto* viewer = o.if_contains("viewer");
    s.viewer = viewer != nullptr && viewer->is_bool() && viewer->get_bool();
    const auto* created = o.if_contains("created");
    s.created = created != nullptr && created->is_int64() ? created->get_int64() : 0;
    if (s.id.empty()) {
        return std::nullopt;
    }
    return s;
}

} // namespace sluice::push
