// Validation of `send` and `more`, for HTTP and WebSocket alike.
#include <sluice/conversation/window.hpp>
#include <sluice/server/validate.hpp>

#include <charconv>

namespace sluice::server {

namespace json = boost::json;

std::optional<Refusal> validate_send(const json::object& body, SendOp& out) {
    const auto* text = body.if_contains("text");
    if (text == nullptr || text->is_null()) {
        return Refusal::of(errc::bad_request, "field 'text' (a non-empty string) is required");
    }
    if (!text->is_string()) {
        return Refusal::of(errc::bad_request, "field 'text' must be a string");
    }
    if (text->get_string().empty()) {
        return Refusal::of(errc::bad_request, "field 'text' must not be empty");
    }
    out.text = std::string(text->get_string());
    return std::nullopt;
}

std::optional<Refusal> validate_seat_change(const json::object& body, SeatChange& out) {
    for (const auto& kv : body) {
        std::optional<std::string>* into = nullptr;
        if (kv.key() == "budget_usd") {
            const auto& v = kv.value();
            if (!v.is_null() && (!v.is_number() || !(v.to_number<double>() >= 0))) {
                return Refusal::of(
                    errc::bad_request,
                    "field 'budget_usd' must be an amount of 0 or more, or null");
            }
            out.budget_given = true;
            if (!v.is_null()) {
                out.budget_usd = v.to_number<double>();
            }
            continue;
        }
        if (kv.key() == "name") {
            into = &out.name;
        } else if (kv.key() == "permission_mode") {
            into = &out.settings.permission_mode;
        } else if (kv.key() == "model") {
            into = &out.settings.model;
        } else {
            return Refusal::of(
                errc::bad_request,
                "field '" + std::string(kv.key())
                    + "' cannot be changed (a seat's name, permission_mode, model and "
                      "budget_usd can)");
        }
        if (!kv.value().is_string()) {
            return Refusal::of(
                errc::bad_request, "field '" + std::string(kv.key()) + "' must be a string");
        }
        *into = std::string(kv.value().get_string());
    }
    if (!out.name && !out.settings.permission_mode && !out.settings.model && !out.budget_given) {
        return Refusal::of(
            errc::bad_request,
            "nothing to change: give 'name', 'permission_mode', 'model' or 'budget_usd'");
    }
    return std::nullopt;
}

std::optional<Refusal>
validate_answer(const json::object& body, std::string request_id, AnswerOp& out) {
    const auto str = [&body](std::string_view k, std::string& into) -> std::optional<Refusal> {
        const auto* v = body.if_contains(k);
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        if (!v->is_string()) {
            return Refusal::of(
                errc::bad_request, "field '" + std::string(k) + "' must be a string");
        }
        into = std::string(v->get_string());
        return std::nullopt;
    };
    if (request_id.empty()) {
        return Refusal::of(errc::bad_request, "field 'request_id' (a string) is required");
    }
    std::string behavior;
    if (auto r = str("behavior", behavior)) {
        return r;
    }
    if (behavior != "allow" && behavior != "deny") {
        return Refusal::of(errc::bad_request, R"(field 'behavior' must be "allow" or "deny")");
    }
    if (auto r = str("message", out.answer.message)) {
        return r;
    }
    if (auto r = str("by", out.by)) {
        return r;
    }
    if (out.by.size() > 200) {
        return Refusal::of(errc::bad_request, "field 'by' is over 200 bytes");
    }
    if (out.by.empty()) {
        out.by = "api";
    }
    if (const auto* u = body.if_contains("updated_input"); u != nullptr && !u->is_null()) {
        if (!u->is_object()) {
            return Refusal::of(errc::bad_request, "field 'updated_input' must be an object");
        }
        out.answer.updated_input = *u;
    }
    out.answer.request_id = std::move(request_id);
    out.answer.allow = behavior == "allow";
    return std::nullopt;
}

namespace {

// A JSON number that is a whole non-negative integer, as uint64.
std::optional<std::uint64_t> whole(const json::value& v) {
    if (v.is_uint64()) {
        return v.get_uint64();
    }
    if (v.is_int64() && v.get_int64() >= 0) {
        return static_cast<std::uint64_t>(v.get_int64());
    }
    return std::nullopt;
}

} // namespace

std::optional<Refusal>
validate_more(const json::value* before, const json::value* turns, MoreOp& out) {
    out.before.reset();
    out.turns = SUBSCRIBE_TURNS;
    if (before != nullptr && !before->is_null()) {
        const auto b = whole(*before);
        if (!b) {
            return Refusal::of(
                errc::bad_request, "'before' must be a frame position (a non-negative integer)");
        }
        out.before = *b;
    }
    if (turns != nullptr && !turns->is_null()) {
        const auto t = whole(*turns);
        if (!t || *t == 0 || *t > SUBSCRIBE_TURNS) {
            return Refusal::of(
                errc::bad_request,
                "'turns' must be an integer from 1 to " + std::to_string(SUBSCRIBE_TURNS));
        }
        out.turns = static_cast<std::size_t>(*t);
    }
    return std::nullopt;
}

json::value query_value(std::string_view text) {
    std::uint64_t v = 0;
    const auto* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (!text.empty() && ec == std::errc{} && p == end) {
        return v;
    }
    return json::string(text);
}

std::optional<ByteRange> parse_range(
    std::string_view header,
    std::uint64_t size,
    std::optional<Refusal>& refused,
    bool& unsatisfiable) {
    refused.reset();
    unsatisfiable = false;
    if (header.empty()) {
        return std::nullopt;
    }
    const auto number = [](std::string_view t, std::uint64_t& v) {
        const auto* end = t.data() + t.size();
        auto [p, ec] = std::from_chars(t.data(), end, v);
        return !t.empty() && ec == std::errc{} && p == end;
    };
    constexpr std::string_view UNIT = "bytes=";
    const auto dash = header.find('-');
    if (!header.starts_with(UNIT) || dash == std::string_view::npos
        || header.find(',') != std::string_view::npos) {
        refused = Refusal::of(
            errc::bad_request, "Range must be one range of bytes: bytes=a-b, bytes=a- or bytes=-n");
        return std::nullopt;
    }
    const auto a = header.substr(UNIT.size(), dash - UNIT.size());
    const auto b = header.substr(dash + 1);
    std::uint64_t first = 0;
    std::uint64_t last = size == 0 ? 0 : size - 1;
    if (a.empty()) {
        std::uint64_t n = 0;
        if (!number(b, n) || n == 0) {
            refused = Refusal::of(errc::bad_request, "Range bytes=-n needs a positive n");
            return std::nullopt;
        }
        first = n >= size ? 0 : size - n;
    } else if (!number(a, first) || (!b.empty() && (!number(b, last) || last < first))) {
        refused = Refusal::of(errc::bad_request, "Range bytes=a-b needs integers with a <= b");
        return std::nullopt;
    }
    if (first >= size) {
        unsatisfiable = true;
        refused = Refusal::of(
            errc::bad_request,
            "Range starts at or past the end (" + std::to_string(size) + " bytes)");
        return std::nullopt;
    }
    last = std::min(last, size - 1);
    return ByteRange{first, last - first + 1};
}

} // namespace sluice::server
