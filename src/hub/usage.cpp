// Usage counting: prices, Claude Code session lines, result rows (hub/usage.hpp).
#include <sluice/hub/usage.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace sluice::hub {

namespace json = boost::json;

namespace detail {
extern const char* const SHIPPED_PRICES; // prices_shipped.cpp, generated from prices.json
} // namespace detail

namespace {

// Tokens beyond this many in one bucket of one message take the *_above_200k rate.
constexpr std::int64_t LONG_CONTEXT_TOKENS = 200'000;

// ccusage's rate for a 1-hour cache write when the table gives none: twice the input price.
constexpr double CACHE_WRITE_1H_INPUT_MULTIPLIER = 2.0;

std::int64_t int_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return 0;
    }
    if (v->is_int64()) {
        return std::max<std::int64_t>(0, v->get_int64());
    }
    if (v->is_uint64()) {
        return static_cast<std::int64_t>(
            std::min<std::uint64_t>(v->get_uint64(), static_cast<std::uint64_t>(INT64_MAX)));
    }
    if (v->is_double() && v->get_double() >= 0) {
        return static_cast<std::int64_t>(v->get_double());
    }
    return 0;
}

std::optional<double> number_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (v->is_double()) {
        return v->get_double();
    }
    if (v->is_int64()) {
        return static_cast<double>(v->get_int64());
    }
    if (v->is_uint64()) {
        return static_cast<double>(v->get_uint64());
    }
    return std::nullopt;
}

std::optional<std::string_view> string_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string()) {
        return std::nullopt;
    }
    return std::string_view(v->get_string());
}

double tiered(std::int64_t tokens, double base, std::optional<double> above) {
    if (tokens <= 0) {
        return 0.0;
    }
    if (above && tokens > LONG_CONTEXT_TOKENS) {
        return static_cast<double>(LONG_CONTEXT_TOKENS) * base
               + static_cast<double>(tokens - LONG_CONTEXT_TOKENS) * *above;
    }
    return static_cast<double>(tokens) * base;
}

// `"2025-06-14T23:54:55.558Z"` → whether it reads as a date and time (the day is its first ten
// characters: Claude Code writes UTC).
bool is_timestamp(std::string_view t) {
    if (t.size() < 19) {
        return false;
    }
    const auto digits = [&t](std::size_t from, std::size_t n) {
        return std::all_of(
            t.begin() + static_cast<std::ptrdiff_t>(from),
            t.begin() + static_cast<std::ptrdiff_t>(from + n),
            [](char c) { return c >= '0' && c <= '9'; });
    };
    return digits(0, 4) && t[4] == '-' && digits(5, 2) && t[7] == '-' && digits(8, 2)
           && (t[10] == 'T' || t[10] == ' ') && digits(11, 2) && t[13] == ':' && digits(14, 2)
           && t[16] == ':' && digits(17, 2);
}

// ccusage's version check: digits '.' digits '.' digit…
bool is_semver_prefix(std::string_view v) {
    std::size_t i = 0;
    for (int part = 0; part < 2; ++part) {
        const auto start = i;
        while (i < v.size() && v[i] >= '0' && v[i] <= '9') {
            ++i;
        }
        if (i == start || i >= v.size() || v[i] != '.') {
            return false;
        }
        ++i;
    }
    return i < v.size() && v[i] >= '0' && v[i] <= '9';
}

MessageTokens tokens_of_usage(const json::object& u) {
    MessageTokens t;
    t.tokens.input = int_of(u, "input_tokens");
    t.tokens.output = int_of(u, "output_tokens");
    t.tokens.cache_read = int_of(u, "cache_read_input_tokens");
    t.tokens.cache_write = int_of(u, "cache_creation_input_tokens");
    if (const auto* b = u.if_contains("cache_creation"); b != nullptr && b->is_object()) {
        const auto m5 = int_of(b->get_object(), "ephemeral_5m_input_tokens");
        t.cache_write_1h = int_of(b->get_object(), "ephemeral_1h_input_tokens");
        if (u.if_contains("cache_creation_input_tokens") == nullptr) {
            t.tokens.cache_write = m5 + t.cache_write_1h;
        }
    }
    return t;
}

} // namespace

UsageTokens& UsageTokens::operator+=(const UsageTokens& o) noexcept {
    input += o.input;
    output += o.output;
    cache_read += o.cache_read;
    cache_write += o.cache_write;
    return *this;
}

UsageTokens& UsageTokens::operator-=(const UsageTokens& o) noexcept {
    input -= o.input;
    output -= o.output;
    cache_read -= o.cache_read;
    cache_write -= o.cache_write;
    return *this;
}

// ---- prices ------------------------------------------------------------------------------------

boost::system::result<PriceTable> PriceTable::parse(std::string_view text, std::string& why) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) {
        why = ec ? "not JSON: " + ec.message() : "not a JSON object";
        return boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
    }
    const auto& o = v.get_object();
    PriceTable t;
    t.date_ = std::string(string_of(o, "date").value_or(""));
    t.source_ = std::string(string_of(o, "source").value_or(""));
    const auto* models = o.if_contains("models");
    if (t.date_.empty() || t.source_.empty() || models == nullptr || !models->is_object()) {
        why = R"(a price table names its "date" and "source" and has a "models" object)";
        return boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
    }
    for (const auto& [name, p] : models->get_object()) {
        if (!p.is_object()) {
            why = "models." + std::string(name) + " is not an object";
            return boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
        }
        const auto& po = p.get_object();
        auto in = number_of(po, "input_cost_per_token");
        auto out = number_of(po, "output_cost_per_token");
        if (!in || !out) {
            why = "models." + std::string(name)
                  + " needs input_cost_per_token and output_cost_per_token";
            return boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
        }
        ModelPrice m;
        m.input = *in;
        m.output = *out;
        m.cache_write = number_of(po, "cache_creation_input_token_cost").value_or(m.input);
        m.cache_read = number_of(po, "cache_read_input_token_cost").value_or(m.input);
        m.cache_write_1h = number_of(po, "cache_creation_input_token_cost_above_1hr");
        m.input_above_200k = number_of(po, "input_cost_per_token_above_200k_tokens");
        m.output_above_200k = number_of(po, "output_cost_per_token_above_200k_tokens");
        m.cache_write_above_200k =
            number_of(po, "cache_creation_input_token_cost_above_200k_tokens");
        m.cache_read_above_200k = number_of(po, "cache_read_input_token_cost_above_200k_tokens");
        t.models_.emplace(std::string(name), m);
    }
    return t;
}

std::shared_ptr<const PriceTable>
PriceTable::load(const std::filesystem::path& file, std::string& why) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) {
        why = "cannot read the price table " + file.string();
        return nullptr;
    }
    auto t = parse(ss.str(), why);
    if (!t) {
        why = "the price table " + file.string() + ": " + why;
        return nullptr;
    }
    return std::make_shared<const PriceTable>(std::move(*t));
}

std::shared_ptr<const PriceTable> PriceTable::shipped() {
    static const std::shared_ptr<const PriceTable> table = [] {
        std::string why;
        auto t = parse(detail::SHIPPED_PRICES, why);
        if (!t) {
            std::fprintf(stderr, "sluice: the shipped price table is bad: %s\n", why.c_str());
            std::abort(); // a build defect: tests/unit/hub/usage_test.cpp parses it
        }
        return std::make_shared<const PriceTable>(std::move(*t));
    }();
    return table;
}

const ModelPrice* PriceTable::find(std::string_view model) const {
    if (auto it = models_.find(model); it != models_.end()) {
        return &it->second;
    }
    constexpr std::string_view prefix = "anthropic/";
    if (model.starts_with(prefix)) {
        if (auto it = models_.find(model.substr(prefix.size())); it != models_.end()) {
            return &it->second;
        }
    }
    return nullptr;
}

std::optional<double> PriceTable::cost(std::string_view model, const MessageTokens& t) const {
    const auto* p = find(model);
    if (p == nullptr) {
        return std::nullopt;
    }
    const auto write_1h = std::clamp<std::int64_t>(t.cache_write_1h, 0, t.tokens.cache_write);
    const auto write_5m = t.tokens.cache_write - write_1h;
    const double rate_1h = p->cache_write_1h.value_or(p->input * CACHE_WRITE_1H_INPUT_MULTIPLIER);
    std::optional<double> above_1h;
    if (p->input_above_200k) {
        above_1h = *p->input_above_200k * CACHE_WRITE_1H_INPUT_MULTIPLIER;
    }
    return tiered(t.tokens.input, p->input, p->input_above_200k)
           + tiered(t.tokens.output, p->output, p->output_above_200k)
           + tiered(write_5m, p->cache_write, p->cache_write_above_200k)
           + tiered(write_1h, rate_1h, above_1h)
           + tiered(t.tokens.cache_read, p->cache_read, p->cache_read_above_200k);
}

UsageDelta priced(
    std::string day,
    std::string model,
    const MessageTokens& tokens,
    std::optional<double> cost,
    const PriceTable& prices) {
    UsageDelta d;
    d.day = std::move(day);
    d.model = std::move(model);
    d.tokens = tokens.tokens;
    if (cost) {
        d.cost_usd = *cost;
    } else if (d.tokens.total() != 0) {
        auto c = d.model.empty() ? std::nullopt : prices.cost(d.model, tokens);
        if (c) {
            d.cost_usd = *c;
        } else {
            d.unpriced_tokens = d.tokens.total();
        }
    }
    return d;
}

// ---- hosted seats' result rows ---------------------------------------------------------------

std::vector<UsageDelta> usage_of_result_row(
    const json::object& row,
    std::string_view model,
    const std::string& day,
    const PriceTable& prices) {
    std::vector<UsageDelta> out;
    if (string_of(row, "type") != "result") {
        return out;
    }
    // Claude Code: per model, each with the cost it computed.
    if (const auto* mu = row.if_contains("modelUsage"); mu != nullptr && mu->is_object()) {
        for (const auto& [name, v] : mu->get_object()) {
            if (!v.is_object()) {
                continue;
            }
            const auto& m = v.get_object();
            MessageTokens t;
            t.tokens.input = int_of(m, "inputTokens");
            t.tokens.output = int_of(m, "outputTokens");
            t.tokens.cache_read = int_of(m, "cacheReadInputTokens");
            t.tokens.cache_write = int_of(m, "cacheCreationInputTokens");
            auto d = priced(day, std::string(name), t, number_of(m, "costUSD"), prices);
            if (d.tokens.total() != 0 || d.cost_usd != 0) {
                out.push_back(std::move(d));
            }
        }
        if (!out.empty()) {
            return out;
        }
    }
    const auto* u = row.if_contains("usage");
    if (u == nullptr || !u->is_object()) {
        return out;
    }
    const auto t = tokens_of_usage(u->get_object());
    auto name = std::string(string_of(row, "model").value_or(model));
    auto d = priced(day, std::move(name), t, number_of(row, "total_cost_usd"), prices);
    if (d.tokens.total() != 0 || d.cost_usd != 0) {
        out.push_back(std::move(d));
    }
    return out;
}

std::string utc_day_now() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    std::array<char, 16> buf{};
    std::strftime(buf.data(), buf.size(), "%Y-%m-%d", &tm);
    return buf.data();
}

// ---- Claude Code session lines ---------------------------------------------------------------

bool has_refused_null(std::string_view line) {
    static constexpr std::array<std::string_view, 11> REFUSED{
        "id",
        "cwd",
        "model",
        "speed",
        "costUSD",
        "version",
        "sessionId",
        "requestId",
        "isApiErrorMessage",
        "cache_read_input_tokens",
        "cache_creation_input_tokens"};
    constexpr std::string_view marker = ":null";
    std::size_t from = 0;
    while (true) {
        const auto at = line.find(marker, from);
        if (at == std::string_view::npos) {
            return false;
        }
        from = at + marker.size();
        // The field is the quoted name just before the colon.
        if (at < 2 || line[at - 1] != '"') {
            continue;
        }
        const auto open = line.rfind('"', at - 2);
        if (open == std::string_view::npos) {
            continue;
        }
        const auto field = line.substr(open + 1, at - 2 - open);
        if (std::find(REFUSED.begin(), REFUSED.end(), field) != REFUSED.end()) {
            return true;
        }
    }
}

ClaudeUsageCounter::ClaudeUsageCounter(
    std::shared_ptr<const PriceTable> prices, std::string session_id)
    : prices_(std::move(prices))
    , session_id_(std::move(session_id)) {
}

void ClaudeUsageCounter::line(std::string_view text, std::vector<UsageDelta>& out) {
    if (text.find(R"("usage":{)") == std::string_view::npos || has_refused_null(text)) {
        return;
    }
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) {
        return;
    }
    const auto& row = v.get_object();
    const auto* msg = row.if_contains("message");
    if (msg == nullptr || !msg->is_object()) {
        return;
    }
    const auto& m = msg->get_object();
    const auto* usage = m.if_contains("usage");
    const auto ts = string_of(row, "timestamp");
    if (usage == nullptr || !usage->is_object() || !ts || !is_timestamp(*ts)) {
        return;
    }
    // ccusage drops rows whose id fields are present but empty, and odd versions.
    const auto version = string_of(row, "version");
    const auto session = string_of(row, "sessionId");
    const auto request = string_of(row, "requestId");
    const auto id = string_of(m, "id");
    const auto model = string_of(m, "model");
    if ((version && !is_semver_prefix(*version)) || (session && session->empty())
        || (request && request->empty()) || (id && id->empty()) || (model && model->empty())) {
        return;
    }
    const auto tokens = tokens_of_usage(usage->get_object());
    std::string model_name(model.value_or(""));
    if (model_name == "<synthetic>") {
        model_name.clear(); // Claude Code's own stand-in rows: no model, no price
    }
    auto delta = priced(
        std::string(ts->substr(0, 10)),
        std::move(model_name),
        tokens,
        number_of(row, "costUSD"),
        *prices_);
    if (!id) {
        out.push_back(std::move(delta)); // nothing to tell its copies apart by: counted
        return;
    }
    Seen c;
    c.key = std::string(*id);
    c.key += '\0';
    c.key += session ? *session : std::string_view(session_id_);
    if (request) {
        c.request_id = std::string(*request);
    }
    c.timestamp = std::string(*ts);
    const auto* side = row.if_contains("isSidechain");
    c.sidechain = side != nullptr && side->is_bool() && side->get_bool();
    c.total = delta.tokens.total();
    c.counted = std::move(delta);

    auto& same = by_key_[c.key];
    auto match = std::find_if(
        same.begin(), same.end(), [&c](const auto& it) { return it->request_id == c.request_id; });
    if (match == same.end()) {
        // A sidechain replay of a message under another request id, at the same time.
        match = std::find_if(same.begin(), same.end(), [&c](const auto& it) {
            return it->timestamp == c.timestamp && (c.sidechain || it->sidechain);
        });
    }
    if (match != same.end()) {
        auto& e = **match;
        const bool replace =
            c.sidechain != e.sidechain ? e.sidechain : c.total > e.total; // a tie keeps the first
        if (replace) {
            UsageDelta d = c.counted;
            d.tokens -= e.counted.tokens;
            d.cost_usd -= e.counted.cost_usd;
            d.unpriced_tokens -= e.counted.unpriced_tokens;
            if (d.model != e.counted.model || d.day != e.counted.day) {
                // Another cell: take back the old one's whole, add the new one's whole.
                UsageDelta back = e.counted;
                back.tokens = UsageTokens{};
                back.tokens -= e.counted.tokens;
                back.cost_usd = -e.counted.cost_usd;
                back.unpriced_tokens = -e.counted.unpriced_tokens;
                out.push_back(std::move(back));
                d = c.counted;
            }
            out.push_back(std::move(d));
            e.request_id = std::move(c.request_id);
            e.timestamp = std::move(c.timestamp);
            e.sidechain = c.sidechain;
            e.total = c.total;
            e.counted = std::move(c.counted);
        }
        return;
    }
    out.push_back(c.counted);
    order_.push_back(std::move(c));
    same.push_back(std::prev(order_.end()));
    while (order_.size() > USAGE_DEDUP_WINDOW) {
        forget_oldest();
    }
}

void ClaudeUsageCounter::forget_oldest() {
    auto it = order_.begin();
    if (auto k = by_key_.find(it->key); k != by_key_.end()) {
        std::erase(k->second, it);
        if (k->second.empty()) {
            by_key_.erase(k);
        }
    }
    order_.erase(it);
}

void ClaudeUsageCounter::trim(std::size_t keep) {
    while (order_.size() > keep) {
        forget_oldest();
    }
}

} // namespace sluice::hub
