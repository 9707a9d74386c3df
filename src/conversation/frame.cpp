// Frame: parsing, the counting writer, and the classification the turn scan reads.
#include "classify.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/assert.hpp>
#include <sluice/core/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

namespace sluice {

namespace json = boost::json;

bool is_frame_type(std::string_view type) noexcept {
    return type == "user" || type == "assistant" || type == "system" || type == "result";
}

namespace {

// Escaped length of one byte, as boost::json's serializer writes it: `"` and `\` and the five
// short control escapes take 2, other control bytes `\u00XX` take 6, everything else 1.
constexpr std::array<std::uint8_t, 256> escaped_lengths() {
    std::array<std::uint8_t, 256> t{};
    for (std::size_t i = 0; i < 256; ++i) {
        t[i] = 1;
    }
    for (std::size_t i = 0; i < 0x20; ++i) {
        t[i] = 6;
    }
    for (char c : {'\b', '\t', '\n', '\f', '\r', '"', '\\'}) {
        t[static_cast<unsigned char>(c)] = 2;
    }
    return t;
}

constexpr auto ESCAPED = escaped_lengths();

// Whether any byte of `w` is below 0x20, a quote or a backslash (SWAR; exact, no false hits).
bool needs_escape(std::uint64_t w) noexcept {
    constexpr std::uint64_t ONES = 0x0101010101010101ULL;
    constexpr std::uint64_t HIGH = 0x8080808080808080ULL;
    auto has_zero = [](std::uint64_t v) { return ((v - ONES) & ~v & HIGH) != 0; };
    const bool below_space = ((w - ONES * 0x20) & ~w & HIGH) != 0;
    return below_space || has_zero(w ^ (ONES * '"')) || has_zero(w ^ (ONES * '\\'));
}

std::size_t string_bytes(std::string_view s) noexcept {
    std::size_t n = 2;
    std::size_t i = 0;
    // Eight plain bytes at a time; a word holding anything to escape is counted byte by byte.
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, s.data() + i, 8);
        if (!needs_escape(w)) {
            n += 8;
            continue;
        }
        for (std::size_t k = i; k < i + 8; ++k) {
            n += ESCAPED[static_cast<unsigned char>(s[k])];
        }
    }
    for (; i < s.size(); ++i) {
        n += ESCAPED[static_cast<unsigned char>(s[i])];
    }
    return n;
}

std::size_t digits(std::uint64_t v) noexcept {
    std::size_t n = 1;
    while (v >= 10) {
        v /= 10;
        ++n;
    }
    return n;
}

std::size_t double_bytes(double d) noexcept {
    // The serializer writes a number into its own fixed buffer: no allocation.
    json::value v(d);
    json::serializer sr;
    sr.reset(&v);
    std::array<char, 64> buf{};
    std::size_t n = 0;
    while (!sr.done()) {
        n += sr.read(buf.data(), buf.size()).size();
    }
    return n;
}

} // namespace

// The two json_wire_bytes recurse over nesting: every value comes from boost::json::parse with
// its default max_depth (32), or is built by code a few levels deep, so depth is bounded.
// NOLINTNEXTLINE(misc-no-recursion)
std::size_t json_wire_bytes(const json::object& o) noexcept {
    std::size_t n = 2 + (o.empty() ? 0 : o.size() - 1); // braces and commas
    for (const auto& kv : o) {
        n += string_bytes(kv.key()) + 1 + json_wire_bytes(kv.value());
    }
    return n;
}

// NOLINTNEXTLINE(misc-no-recursion): depth bounded, see above.
std::size_t json_wire_bytes(const json::value& v) noexcept {
    switch (v.kind()) {
    case json::kind::null:
        return 4;
    case json::kind::bool_:
        return v.get_bool() ? 4 : 5;
    case json::kind::int64: {
        const std::int64_t i = v.get_int64();
        return i < 0 ? 1 + digits(static_cast<std::uint64_t>(-(i + 1)) + 1)
                     : digits(static_cast<std::uint64_t>(i));
    }
    case json::kind::uint64:
        return digits(v.get_uint64());
    case json::kind::double_:
        return double_bytes(v.get_double());
    case json::kind::string:
        return string_bytes(v.get_string());
    case json::kind::array: {
        const auto& a = v.get_array();
        std::size_t n = 2 + (a.empty() ? 0 : a.size() - 1);
        for (const auto& e : a) {
            n += json_wire_bytes(e);
        }
        return n;
    }
    case json::kind::object:
        return json_wire_bytes(v.get_object());
    }
    return 0;
}

namespace {

std::string_view str_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v != nullptr && v->is_string()) {
        return v->get_string();
    }
    return {};
}

bool true_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_bool() && v->get_bool();
}

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

std::string_view trim_front(std::string_view s) {
    while (!s.empty()
           && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    return s;
}

const std::string_view CONTINUATION =
    "This session is being continued from a previous conversation";
const std::string_view CAVEAT =
    "Caveat: The messages below were generated by the user while running";

// What one piece of user text is: a typed prompt, a command, a continuation, or a note.
FrameRole classify_text(std::string_view raw) {
    const std::string_view s = trim_front(raw);
    if (s.empty()) {
        return FrameRole::note;
    }
    if (starts_with(s, "<command-name>") || starts_with(s, "<command-message>")
        || starts_with(s, "<bash-input>")) {
        return FrameRole::command;
    }
    if (s.front() == '<') {
        return FrameRole::note; // an envelope: stdout echoes, task notifications, IDE context…
    }
    if (s.front() == '[') {
        // A bracketed note alone (interrupt markers, image notes) is not a prompt.
        const auto close = s.find(']');
        if (starts_with(s, "[Request interrupted by user")
            || (close != std::string_view::npos && trim_front(s.substr(close + 1)).empty())) {
            return FrameRole::note;
        }
    }
    if (starts_with(s, CAVEAT)) {
        return FrameRole::note;
    }
    if (starts_with(s, CONTINUATION)) {
        return FrameRole::continuation;
    }
    return FrameRole::prompt;
}

void classify_user(const json::object& row, TurnFacts& f) {
    f.role = FrameRole::note;
    const auto* msg = row.if_contains("message");
    if (msg == nullptr || !msg->is_object()) {
        return; // malformed: no turn when in doubt
    }
    if (true_at(row, "isMeta")) {
        return;
    }
    if (true_at(row, "isCompactSummary")) {
        f.role = FrameRole::continuation;
        return;
    }
    const auto* content = msg->get_object().if_contains("content");
    if (content == nullptr) {
        return;
    }
    if (content->is_string()) {
        f.role = classify_text(content->get_string());
        return;
    }
    if (!content->is_array()) {
        return;
    }
    detail::UserBlocks seen;
    for (const auto& b : content->get_array()) {
        if (!b.is_object()) {
            return; // not a content block: malformed
        }
        const auto& block = b.get_object();
        const auto type = str_at(block, "type");
        if (type == "tool_result") {
            f.role = FrameRole::tool_result;
            f.results_for.emplace_back(str_at(block, "tool_use_id"));
        } else if (type == "text") {
            seen.text(str_at(block, "text"));
        } else if (type == "image") {
            seen.image();
        }
    }
    seen.settle(f);
}

void classify_assistant(const json::object& row, TurnFacts& f) {
    const auto* msg = row.if_contains("message");
    if (msg == nullptr || !msg->is_object()) {
        return;
    }
    const auto* content = msg->get_object().if_contains("content");
    if (content == nullptr || !content->is_array()) {
        return;
    }
    for (const auto& b : content->get_array()) {
        if (!b.is_object()) {
            continue;
        }
        const auto& block = b.get_object();
        if (str_at(block, "type") == "tool_use") {
            f.tool_call = true;
            if (str_at(block, "name") == "Skill") {
                f.skill_calls.emplace_back(str_at(block, "id"));
            }
        }
    }
}

// Boost.JSON 1.81 parses a number beyond double's range (`1e999`) as an infinity and writes an
// infinity as `Infinity`, which no JSON parser reads back (found by the transcript_line fuzzer:
// the frame's JSON did not parse again). A frame's JSON must be JSON, so an infinity becomes the
// nearest finite double and a NaN (only code can build one) becomes null.
bool finite_numbers(const json::object& o) noexcept;
json::object& make_finite(json::object& o);

// NOLINTNEXTLINE(misc-no-recursion): depth bounded, see json_wire_bytes.
bool finite_numbers(const json::value& v) noexcept {
    switch (v.kind()) {
    case json::kind::double_:
        return std::isfinite(v.get_double());
    case json::kind::array:
        return std::all_of(v.get_array().begin(), v.get_array().end(), [](const json::value& e) {
            return finite_numbers(e);
        });
    case json::kind::object:
        return finite_numbers(v.get_object());
    default:
        return true;
    }
}

// NOLINTNEXTLINE(misc-no-recursion)
bool finite_numbers(const json::object& o) noexcept {
    return std::all_of(o.begin(), o.end(), [](const json::key_value_pair& kv) {
        return finite_numbers(kv.value());
    });
}

// Replaces the non-finite numbers under `v`; returns `v`.
// NOLINTNEXTLINE(misc-no-recursion)
json::value& make_finite(json::value& v) {
    if (v.is_double() && !std::isfinite(v.get_double())) {
        const double d = v.get_double();
        if (std::isnan(d)) {
            v = nullptr;
        } else {
            v = d > 0 ? std::numeric_limits<double>::max() : std::numeric_limits<double>::lowest();
        }
    } else if (v.is_array()) {
        for (auto& e : v.get_array()) {
            (void)make_finite(e);
        }
    } else if (v.is_object()) {
        (void)make_finite(v.get_object());
    }
    return v;
}

// NOLINTNEXTLINE(misc-no-recursion)
json::object& make_finite(json::object& o) {
    for (auto& kv : o) {
        (void)make_finite(kv.value());
    }
    return o;
}

// The name of a type most rows have, as static storage; a null view for any other.
std::string_view common_type(std::string_view type) noexcept {
    static constexpr std::array<std::string_view, 8> COMMON{
        "user",
        "assistant",
        "system",
        "result",
        "summary",
        "progress",
        "attachment",
        "stream_event"};
    for (const auto name : COMMON) {
        if (name == type) {
            return name;
        }
    }
    return {};
}

// The bytes a frame asks for after its block's head, and where they begin once allocated.
struct FrameTail {
    std::size_t bytes{};
    char* data = nullptr;
};

// Allocates a frame's shared block (its count and the frame) with the frame's tail after it, so
// a frame and its JSON are one heap block. allocate_shared asks once, for one block; the frame is
// built in it afterwards and reads where its tail begins then.
template <class T>
class FrameAllocator {
public:
    using value_type = T;

    explicit FrameAllocator(FrameTail* tail) noexcept
        : tail_(tail) {}

    template <class U>
    // NOLINTNEXTLINE(google-explicit-constructor,hicpp-explicit-conversions): rebinding
    FrameAllocator(const FrameAllocator<U>& other) noexcept
        : tail_(other.tail()) {}

    T* allocate(std::size_t n) {
        const std::size_t head = n * sizeof(T);
        auto* block = static_cast<char*>(::operator new(head + tail_->bytes));
        tail_->data = block + head;
        return reinterpret_cast<T*>(block); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    }

    // The tail is not read here: the pointer is stale once the frame is built.
    void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p); }

    [[nodiscard]] FrameTail* tail() const noexcept { return tail_; }

    template <class U>
    bool operator==(const FrameAllocator<U>& other) const noexcept {
        return tail_ == other.tail();
    }

private:
    FrameTail* tail_;
};

FramePtr make_frame(json::object row, bool keep_row) {
    if (!finite_numbers(row)) {
        (void)make_finite(row);
    }
    const std::size_t wire_bytes = json_wire_bytes(row);
    const std::string_view type = str_at(row, "type");
    FrameTail tail{wire_bytes + (common_type(type).data() == nullptr ? type.size() : 0)};
    return std::allocate_shared<const Frame>(
        FrameAllocator<Frame>(&tail),
        Frame::Key{},
        std::move(row),
        keep_row,
        wire_bytes,
        tail.data);
}

} // namespace

Frame::Frame(
    Key /*key*/, json::object&& row, bool keep_row, std::size_t wire_bytes, char* const& tail)
    : row_kept_(keep_row) {
    // The counted weight sized the block: the JSON is serialized once, in place, no regrowth.
    json::serializer sr;
    sr.reset(&row);
    std::size_t n = 0;
    while (!sr.done() && n < wire_bytes) {
        n += sr.read(tail + n, wire_bytes - n).size();
    }
    SLUICE_INVARIANT(n == wire_bytes && sr.done(), "the counting writer matches the serializer");
    json_ = std::string_view(tail, wire_bytes);
    const std::string_view type = str_at(row, "type");
    type_ = common_type(type);
    if (type_.data() == nullptr && !type.empty()) {
        std::memcpy(tail + wire_bytes, type.data(), type.size());
        type_ = std::string_view(tail + wire_bytes, type.size());
    }
    const auto* parent = row.if_contains("parent_tool_use_id");
    facts_.subagent =
        true_at(row, "isSidechain")
        || (parent != nullptr && parent->is_string() && !parent->get_string().empty());
    if (type_ == "user") {
        classify_user(row, facts_);
    } else if (type_ == "assistant") {
        classify_assistant(row, facts_);
    } else if (type_ == "system") {
        const auto subtype = str_at(row, "subtype");
        if (subtype == "compact_boundary") {
            facts_.role = FrameRole::compact_boundary;
        } else if (subtype == "thinking_tokens" && !facts_.subagent) {
            const auto* d = row.if_contains("estimated_tokens_delta");
            if (d != nullptr && d->is_int64() && d->get_int64() > 0) {
                thinking_delta_ = static_cast<std::uint64_t>(d->get_int64());
            } else if (d != nullptr && d->is_uint64()) {
                thinking_delta_ = d->get_uint64();
            }
        }
    }
    // An oversize frame keeps its object whatever it was built by: the one thing done with it
    // next is cutting its reference form (held_form), which reads the object; dropping it here
    // only to parse the megabytes back there cost a second parse of every such row.
    if (keep_row || wire_bytes > FRAME_INLINE_MAX_BYTES) {
        row_kept_ = true;
        row_ = std::make_unique<json::object>(std::move(row));
    }
}

FrameRole detail::classify_user_text(std::string_view raw) {
    return classify_text(raw);
}

void detail::UserBlocks::text(std::string_view raw) {
    switch (classify_text(raw)) {
    case FrameRole::prompt:
        prompt_ = true;
        break;
    case FrameRole::command:
        command_ = true;
        break;
    case FrameRole::continuation:
        continuation_ = true;
        break;
    default:
        break;
    }
}

void detail::UserBlocks::settle(TurnFacts& f) const noexcept {
    if (f.role == FrameRole::tool_result) {
        return;
    }
    if (command_) {
        f.role = FrameRole::command;
    } else if (prompt_) {
        f.role = FrameRole::prompt;
    } else if (continuation_) {
        f.role = FrameRole::continuation;
    } else if (image_) {
        f.role = FrameRole::image;
    }
}

boost::system::result<FramePtr> Frame::parse(std::string_view json_line) {
    boost::system::error_code ec;
    json::value v = json::parse(json_line, ec);
    if (ec) {
        return ec;
    }
    if (!v.is_object()) {
        return make_error_code(errc::bad_request);
    }
    return make_frame(std::move(v.get_object()), false);
}

FramePtr Frame::from_row(json::object row) {
    return make_frame(std::move(row), true);
}

FramePtr Frame::from_row_compact(json::object row) {
    return make_frame(std::move(row), false);
}

const json::object& Frame::row() const {
    if (!row_kept_) {
        std::call_once(row_once_, [this] {
            // json_ was serialized from an object, so it parses back to one.
            row_ = std::make_unique<json::object>(json::parse(json_).as_object());
        });
    }
    return *row_;
}

} // namespace sluice
