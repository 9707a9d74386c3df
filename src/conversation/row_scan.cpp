// RowScanner: simdjson's DOM parser validates a row; only the turn scan's fields are read.
#include "classify.hpp"

#include <sluice/conversation/row_scan.hpp>

#include <simdjson.h>

#include <algorithm>

namespace sluice {

namespace dom = simdjson::dom;

namespace {

// Nesting the scanner takes; deeper rows go to Boost.JSON, whose default limit (32) decides.
// Kept below that limit so that no row the scanner takes is one Boost.JSON refuses.
constexpr std::size_t MAX_DEPTH = 24;
constexpr std::size_t FIRST_CAPACITY = 64U << 10;

// The value of the last field named `key` (Boost.JSON keeps the last of duplicate keys).
std::optional<dom::element> last_at(dom::object o, std::string_view key) {
    std::optional<dom::element> v;
    for (const auto field : o) {
        if (field.key == key) {
            v = field.value;
        }
    }
    return v;
}

std::string_view str_of(const std::optional<dom::element>& v) {
    std::string_view s;
    if (v && v->is_string()) {
        s = v->get_string().value_unsafe();
    }
    return s;
}

bool true_of(const std::optional<dom::element>& v) {
    return v && v->is_bool() && v->get_bool().value_unsafe();
}

// The fields of a row the scan reads, each the last of its name.
struct TopFields {
    std::optional<dom::element> type, sidechain, parent, message, meta, compact, subtype;
};

TopFields top_fields(dom::object row) {
    TopFields t;
    for (const auto field : row) {
        const std::string_view k = field.key;
        if (k == "type") {
            t.type = field.value;
        } else if (k == "isSidechain") {
            t.sidechain = field.value;
        } else if (k == "parent_tool_use_id") {
            t.parent = field.value;
        } else if (k == "message") {
            t.message = field.value;
        } else if (k == "isMeta") {
            t.meta = field.value;
        } else if (k == "isCompactSummary") {
            t.compact = field.value;
        } else if (k == "subtype") {
            t.subtype = field.value;
        }
    }
    return t;
}

// The content of a row's message object, if the message is an object.
std::optional<dom::element> content_of(const std::optional<dom::element>& message, bool& object) {
    object = message && message->is_object();
    if (!object) {
        return std::nullopt;
    }
    return last_at(message->get_object().value_unsafe(), "content");
}

// As Frame's classify_user, over the DOM.
void classify_user(const TopFields& t, TurnFacts& f) {
    f.role = FrameRole::note;
    bool object = false;
    const auto content = content_of(t.message, object);
    if (!object || true_of(t.meta)) {
        return;
    }
    if (true_of(t.compact)) {
        f.role = FrameRole::continuation;
        return;
    }
    if (!content) {
        return;
    }
    if (content->is_string()) {
        f.role = detail::classify_user_text(content->get_string().value_unsafe());
        return;
    }
    if (!content->is_array()) {
        return;
    }
    detail::UserBlocks seen;
    const dom::array blocks = content->get_array().value_unsafe(); // named: outlives the loop
    for (const auto b : blocks) {
        if (!b.is_object()) {
            return; // not a content block: malformed
        }
        std::optional<dom::element> type;
        std::optional<dom::element> id;
        std::optional<dom::element> text;
        const dom::object block = b.get_object().value_unsafe();
        for (const auto field : block) {
            const std::string_view k = field.key;
            if (k == "type") {
                type = field.value;
            } else if (k == "tool_use_id") {
                id = field.value;
            } else if (k == "text") {
                text = field.value;
            }
        }
        const auto kind = str_of(type);
        if (kind == "tool_result") {
            f.role = FrameRole::tool_result;
            f.results_for.emplace_back(str_of(id));
        } else if (kind == "text") {
            seen.text(str_of(text));
        } else if (kind == "image") {
            seen.image();
        }
    }
    seen.settle(f);
}

// As Frame's classify_assistant, over the DOM.
void classify_assistant(const TopFields& t, TurnFacts& f) {
    bool object = false;
    const auto content = content_of(t.message, object);
    if (!content || !content->is_array()) {
        return;
    }
    const dom::array blocks = content->get_array().value_unsafe(); // named: outlives the loop
    for (const auto b : blocks) {
        if (!b.is_object()) {
            continue;
        }
        std::optional<dom::element> type;
        std::optional<dom::element> name;
        std::optional<dom::element> id;
        const dom::object block = b.get_object().value_unsafe();
        for (const auto field : block) {
            const std::string_view k = field.key;
            if (k == "type") {
                type = field.value;
            } else if (k == "name") {
                name = field.value;
            } else if (k == "id") {
                id = field.value;
            }
        }
        if (str_of(type) == "tool_use") {
            f.tool_call = true;
            if (str_of(name) == "Skill") {
                f.skill_calls.emplace_back(str_of(id));
            }
        }
    }
}

} // namespace

struct RowScanner::Impl {
    dom::parser parser{ROW_SCAN_MAX_BYTES};
    bool allocated{};

    bool parse(std::string_view row, dom::element& doc);
};

RowScanner::RowScanner()
    : impl_(std::make_unique<Impl>()) {
}

RowScanner::RowScanner(RowScanner&&) noexcept = default;
RowScanner& RowScanner::operator=(RowScanner&&) noexcept = default;
RowScanner::~RowScanner() = default;

// Parses `row` into the parser's document; false when simdjson refuses it (or cannot take it).
bool RowScanner::Impl::parse(std::string_view row, dom::element& doc) {
    if (row.empty() || row.size() > ROW_SCAN_MAX_BYTES) {
        return false;
    }
    if (!allocated || parser.capacity() < row.size()) {
        // Grow by doubling (not to each larger row), keeping the depth limit.
        const std::size_t want = std::min(
            ROW_SCAN_MAX_BYTES,
            std::max({row.size(), FIRST_CAPACITY, allocated ? 2 * parser.capacity() : 0}));
        if (parser.allocate(want, MAX_DEPTH) != simdjson::SUCCESS) {
            return false;
        }
        allocated = true;
    }
    return parser.parse(row.data(), row.size(), false).get(doc) == simdjson::SUCCESS;
}

bool RowScanner::valid(std::string_view row) {
    dom::element doc;
    return impl_->parse(row, doc);
}

RowKind RowScanner::scan(std::string_view row, std::string& type, TurnFacts& facts) {
    dom::element doc;
    if (!impl_->parse(row, doc)) {
        return RowKind::unsure;
    }
    if (!doc.is_object()) {
        return RowKind::not_frame;
    }
    const TopFields t = top_fields(doc.get_object().value_unsafe());
    const std::string_view kind = str_of(t.type);
    if (!is_frame_type(kind)) {
        return RowKind::not_frame;
    }
    type.assign(kind);
    facts.role = FrameRole::other;
    facts.tool_call = false;
    facts.skill_calls.clear();
    facts.results_for.clear();
    facts.subagent = true_of(t.sidechain) || !str_of(t.parent).empty();
    if (kind == "user") {
        classify_user(t, facts);
    } else if (kind == "assistant") {
        classify_assistant(t, facts);
    } else if (kind == "system" && str_of(t.subtype) == "compact_boundary") {
        facts.role = FrameRole::compact_boundary;
    }
    return RowKind::frame;
}

} // namespace sluice
