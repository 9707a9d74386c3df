// Seat metadata: SeatSpec ↔ meta.json, read and written in this one place.
#include "ids.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/hub/seat_meta.hpp>

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sluice::hub {

namespace json = boost::json;

std::string encode_meta(const SeatSpec& spec) {
    json::object meta;
    meta["id"] = spec.id;
    meta["name"] = spec.name;
    meta["agent"] = spec.agent;
    meta["model"] = spec.model;
    meta["system"] = spec.system;
    meta["epoch"] = spec.epoch;
    meta["turns"] = spec.turns;
    meta["published"] = spec.published;
    meta["unsynced"] = spec.unsynced;
    if (!spec.cwd.empty()) {
        meta["cwd"] = spec.cwd;
    }
    if (!spec.cmd.empty()) {
        meta["cmd"] = spec.cmd;
    }
    if (!spec.permission_mode.empty()) {
        meta["permission_mode"] = spec.permission_mode;
    }
    if (!spec.session_id.empty()) {
        meta["session_id"] = spec.session_id;
    }
    if (spec.budget_usd) {
        meta["budget_usd"] = *spec.budget_usd;
    }
    if (spec.spend.total_usd > 0 || !spec.spend.day.empty()) {
        meta["spend"] = json::object{
            {"total_usd", spec.spend.total_usd},
            {"day", spec.spend.day},
            {"day_usd", spec.spend.day_usd}};
    }
    return json::serialize(meta) + '\n';
}

Result<SeatSpec> decode_meta(std::string_view text) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) {
        return Failure::of(errc::corrupt_data, "not JSON: " + ec.message());
    }
    if (!v.is_object()) {
        return Failure::of(errc::corrupt_data, "not a JSON object");
    }
    const auto& o = v.get_object();
    std::string bad;
    auto str = [&](std::string_view k) {
        const auto* p = o.if_contains(k);
        if (p != nullptr && !p->is_string() && !p->is_null() && bad.empty()) {
            bad.append("'").append(k).append("' is not a string");
        }
        return p != nullptr && p->is_string() ? std::string(p->get_string()) : std::string();
    };
    SeatSpec spec;
    spec.id = str("id");
    spec.name = str("name");
    spec.agent = str("agent");
    spec.model = str("model");
    spec.system = str("system");
    spec.epoch = str("epoch");
    spec.cwd = str("cwd");
    spec.cmd = str("cmd");
    spec.permission_mode = str("permission_mode");
    spec.session_id = str("session_id");
    if (!bad.empty()) {
        return Failure::of(errc::corrupt_data, bad);
    }
    if (!valid_id(spec.id)) {
        return Failure::of(errc::corrupt_data, "'id' is missing or not a valid id");
    }
    if (spec.epoch.empty()) {
        return Failure::of(errc::corrupt_data, "'epoch' is missing");
    }
    if (const auto* t = o.if_contains("turns"); t != nullptr) {
        if (t->is_uint64()) {
            spec.turns = t->get_uint64();
        } else if (t->is_int64() && t->get_int64() >= 0) {
            spec.turns = static_cast<std::uint64_t>(t->get_int64());
        } else {
            return Failure::of(errc::corrupt_data, "'turns' is not a count");
        }
    }
    if (const auto* p = o.if_contains("published"); p != nullptr) {
        if (p->is_uint64()) {
            spec.published = p->get_uint64();
        } else if (p->is_int64() && p->get_int64() >= 0) {
            spec.published = static_cast<std::uint64_t>(p->get_int64());
        } else {
            return Failure::of(errc::corrupt_data, "'published' is not a count");
        }
    }
    if (const auto* u = o.if_contains("unsynced"); u != nullptr) {
        if (!u->is_bool()) {
            return Failure::of(errc::corrupt_data, "'unsynced' is not a boolean");
        }
        spec.unsynced = u->get_bool();
    }
    if (const auto* b = o.if_contains("budget_usd"); b != nullptr && !b->is_null()) {
        if (!b->is_number() || b->to_number<double>() < 0) {
            return Failure::of(errc::corrupt_data, "'budget_usd' is not an amount");
        }
        spec.budget_usd = b->to_number<double>();
    }
    if (const auto* sp = o.if_contains("spend"); sp != nullptr) {
        const auto* so = sp->if_object();
        const auto amount = [&](std::string_view k) -> std::optional<double> {
            const auto* f = so != nullptr ? so->if_contains(k) : nullptr;
            if (f == nullptr || !f->is_number() || f->to_number<double>() < 0) {
                return std::nullopt;
            }
            return f->to_number<double>();
        };
        const auto* day = so != nullptr ? so->if_contains("day") : nullptr;
        const auto total = amount("total_usd");
        const auto on_day = amount("day_usd");
        if (!total || !on_day || day == nullptr || !day->is_string()) {
            return Failure::of(errc::corrupt_data, "'spend' is not {total_usd, day, day_usd}");
        }
        spec.spend = SeatSpend{*total, std::string(day->get_string()), *on_day};
    }
    if (spec.agent.empty()) {
        spec.agent = "builtin";
    }
    return spec;
}

Result<SeatSpec> read_meta(const std::filesystem::path& dir) {
    const auto file = dir / SEAT_META_FILE;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        const int err = errno;
        return Failure::of(
            errc::io_error, "cannot read " + file.string() + ": " + std::strerror(err));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return Failure::of(errc::io_error, "cannot read " + file.string());
    }
    auto spec = decode_meta(ss.str());
    if (!spec) {
        return Failure{spec.error().code, file.string() + " is damaged: " + spec.error().message};
    }
    return spec;
}

Result<void> write_meta(const std::filesystem::path& dir, const SeatSpec& spec) {
    const auto file = dir / SEAT_META_FILE;
    if (auto r = safe_write(file, encode_meta(spec)); !r) {
        return Failure::of(
            write_errc(r.error()), "cannot write " + file.string() + ": " + r.error().message());
    }
    return {};
}

} // namespace sluice::hub
