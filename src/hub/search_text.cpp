// The indexed text of a row (hub/search_text.hpp).
#include <sluice/core/utf8.hpp>
#include <sluice/hub/search_text.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <ctime>

namespace sluice::hub {

namespace json = boost::json;

namespace {

void add_piece(std::string& out, std::string_view piece) {
    if (piece.empty()) {
        return;
    }
    if (!out.empty()) {
        out += '\n';
    }
    out += piece;
}

// Every string value in `v` (a tool input), depth first: commands, paths, patterns.
void add_strings(std::string& out, const json::value& v, int depth) {
    if (depth > 16) {
        return;
    }
    if (v.is_string()) {
        add_piece(out, head_and_tail(v.get_string()));
    } else if (v.is_array()) {
        for (const auto& e : v.get_array()) {
            add_strings(out, e, depth + 1);
        }
    } else if (v.is_object()) {
        for (const auto& [k, e] : v.get_object()) {
            add_strings(out, e, depth + 1);
        }
    }
}

std::string_view string_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

void add_result(std::string& out, const json::value& content) {
    if (content.is_string()) {
        add_piece(out, head_and_tail(content.get_string()));
        return;
    }
    if (!content.is_array()) {
        return;
    }
    std::string joined;
    for (const auto& b : content.get_array()) {
        if (b.is_object()) {
            add_piece(joined, string_field(b.get_object(), "text"));
        }
    }
    add_piece(out, head_and_tail(joined));
}

} // namespace

std::string head_and_tail(std::string_view text) {
    if (text.size() <= SEARCH_RESULT_HEAD_BYTES + SEARCH_RESULT_TAIL_BYTES) {
        return std::string(text);
    }
    const auto head = utf8::floor_boundary(text, SEARCH_RESULT_HEAD_BYTES);
    const auto tail = utf8::ceil_boundary(text, text.size() - SEARCH_RESULT_TAIL_BYTES);
    std::string out(text.substr(0, head));
    out += " … ";
    out += text.substr(tail);
    return out;
}

std::string indexed_text(const json::object& row, const SearchTextOptions& opt) {
    std::string out;
    const auto type = string_field(row, "type");
    if (type != "user" && type != "assistant") {
        return out;
    }
    if (const auto* meta = row.if_contains("isMeta");
        meta != nullptr && meta->is_bool() && meta->get_bool()) {
        return out;
    }
    const auto* msg = row.if_contains("message");
    if (msg == nullptr || !msg->is_object()) {
        return out;
    }
    const auto* content = msg->get_object().if_contains("content");
    if (content == nullptr) {
        return out;
    }
    if (content->is_string()) {
        add_piece(out, content->get_string());
        return out;
    }
    if (!content->is_array()) {
        return out;
    }
    for (const auto& b : content->get_array()) {
        if (!b.is_object()) {
            continue;
        }
        const auto& block = b.get_object();
        const auto kind = string_field(block, "type");
        if (kind == "text") {
            add_piece(out, string_field(block, "text"));
        } else if (kind == "tool_use" || kind == "server_tool_use") {
            add_piece(out, string_field(block, "name"));
            if (const auto* input = block.if_contains("input"); input != nullptr) {
                add_strings(out, *input, 0);
            }
        } else if (kind == "tool_result") {
            if (const auto* c = block.if_contains("content"); c != nullptr) {
                add_result(out, *c);
            }
        } else if (kind == "thinking" && opt.thinking) {
            add_piece(out, string_field(block, "thinking"));
        }
    }
    return out;
}

std::optional<std::int64_t> parse_time_ms(std::string_view t) {
    if (t.size() != 10 && t.size() < 19) {
        return std::nullopt;
    }
    const auto num = [&t](std::size_t at, std::size_t n) {
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (t[i] < '0' || t[i] > '9') {
                return -1;
            }
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    std::tm tm{};
    tm.tm_year = num(0, 4) - 1900;
    tm.tm_mon = num(5, 2) - 1;
    tm.tm_mday = num(8, 2);
    if (t[4] != '-' || t[7] != '-' || tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mday < 1) {
        return std::nullopt;
    }
    std::int64_t ms = 0;
    if (t.size() > 10) {
        tm.tm_hour = num(11, 2);
        tm.tm_min = num(14, 2);
        tm.tm_sec = num(17, 2);
        if ((t[10] != 'T' && t[10] != ' ') || t[13] != ':' || t[16] != ':' || tm.tm_hour < 0
            || tm.tm_min < 0 || tm.tm_sec < 0) {
            return std::nullopt;
        }
        if (t.size() >= 23 && t[19] == '.') {
            ms = std::max(0, num(20, 3));
        }
    }
    return static_cast<std::int64_t>(::timegm(&tm)) * 1000 + ms;
}

std::int64_t row_time_ms(const json::object& row) {
    return parse_time_ms(string_field(row, "timestamp")).value_or(0);
}

} // namespace sluice::hub
