// The listing's row reader: a SAX pass over one row keeping only the fields the listing reads.
#include "listing_rows.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::hub {

namespace json = boost::json;

namespace {

// Where a container sits in the row: only these four are looked into.
enum class Ctx : std::uint8_t { top, message, content, block, other };

// The row's kept fields, as boost::json::basic_parser hands them over. Every value the
// listing does not read (nested objects, tool results, thinking, numbers) passes by unseen.
class RowHandler {
public:
    static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

    json::object row;
    bool top_is_object{false};

    bool on_document_begin(boost::system::error_code& /*ec*/) { return true; }

    bool on_document_end(boost::system::error_code& /*ec*/) { return true; }

    bool on_object_begin(boost::system::error_code& /*ec*/) {
        if (stack_.empty()) {
            top_is_object = true;
            stack_.push_back(Ctx::top);
            return true;
        }
        const Ctx parent = stack_.back();
        if (parent == Ctx::top && key_ == "message") {
            row["message"] = json::object{}; // a later "message" replaces an earlier one
            stack_.push_back(Ctx::message);
        } else if (parent == Ctx::content) {
            blocks().emplace_back(json::object{});
            stack_.push_back(Ctx::block);
        } else {
            if (parent == Ctx::top) {
                scalar_at_top(json::value(nullptr)); // an object where a kept field is
            } else if (parent == Ctx::message && key_ == "content") {
                message()["content"] = nullptr;
            } else if (parent == Ctx::block) {
                scalar_in_block(json::value(nullptr));
            }
            stack_.push_back(Ctx::other);
        }
        return true;
    }

    bool on_object_end(std::size_t /*n*/, boost::system::error_code& /*ec*/) {
        stack_.pop_back();
        return true;
    }

    bool on_array_begin(boost::system::error_code& /*ec*/) {
        if (stack_.empty()) {
            stack_.push_back(Ctx::other); // a top-level array: not a row
            return true;
        }
        const Ctx parent = stack_.back();
        if (parent == Ctx::message && key_ == "content") {
            message()["content"] = json::array{};
            stack_.push_back(Ctx::content);
            return true;
        }
        if (parent == Ctx::top) {
            scalar_at_top(json::value(nullptr));
        } else if (parent == Ctx::content) {
            blocks().emplace_back(nullptr); // not a content block
        } else if (parent == Ctx::block) {
            scalar_in_block(json::value(nullptr));
        }
        stack_.push_back(Ctx::other);
        return true;
    }

    bool on_array_end(std::size_t /*n*/, boost::system::error_code& /*ec*/) {
        stack_.pop_back();
        return true;
    }

    bool on_key_part(json::string_view s, std::size_t /*n*/, boost::system::error_code& /*ec*/) {
        if (!in_key_) {
            key_.clear();
            in_key_ = true;
        }
        if (key_.size() < KEY_MAX) {
            key_.append(s.data(), std::min(s.size(), KEY_MAX - key_.size() + 1));
        }
        return true;
    }

    bool on_key(json::string_view s, std::size_t n, boost::system::error_code& ec) {
        on_key_part(s, n, ec);
        in_key_ = false;
        return true;
    }

    bool on_string_part(json::string_view s, std::size_t /*n*/, boost::system::error_code& /*ec*/) {
        if (!in_string_) {
            in_string_ = true;
            keep_ = wanted();
            text_.clear();
        }
        if (keep_) {
            text_.append(s.data(), s.size());
        }
        return true;
    }

    bool on_string(json::string_view s, std::size_t n, boost::system::error_code& ec) {
        on_string_part(s, n, ec);
        in_string_ = false;
        // A string under a key not kept still replaces a kept "message" (last key wins).
        scalar(keep_ ? json::value(json::string(text_)) : json::value(nullptr));
        return true;
    }

    bool on_number_part(json::string_view /*s*/, boost::system::error_code& /*ec*/) { return true; }

    bool on_int64(std::int64_t /*i*/, json::string_view /*s*/, boost::system::error_code& /*e*/) {
        scalar(json::value(nullptr));
        return true;
    }

    bool on_uint64(std::uint64_t /*u*/, json::string_view /*s*/, boost::system::error_code& /*e*/) {
        scalar(json::value(nullptr));
        return true;
    }

    bool on_double(double /*d*/, json::string_view /*s*/, boost::system::error_code& /*e*/) {
        scalar(json::value(nullptr));
        return true;
    }

    bool on_bool(bool b, boost::system::error_code& /*ec*/) {
        scalar(json::value(b));
        return true;
    }

    bool on_null(boost::system::error_code& /*ec*/) {
        scalar(json::value(nullptr));
        return true;
    }

    bool on_comment_part(json::string_view /*s*/, boost::system::error_code& /*ec*/) {
        return true;
    }

    bool on_comment(json::string_view /*s*/, boost::system::error_code& /*ec*/) { return true; }

private:
    // Longer keys are none of the kept ones (the longest is "parent_tool_use_id").
    static constexpr std::size_t KEY_MAX = 24;
    static constexpr std::array<std::string_view, 10> TOP_KEYS{
        "type",
        "cwd",
        "isSidechain",
        "parent_tool_use_id",
        "isMeta",
        "isCompactSummary",
        "subtype",
        "customTitle",
        "aiTitle",
        "summary"};
    static constexpr std::array<std::string_view, 5> BLOCK_KEYS{
        "type", "text", "tool_use_id", "name", "id"};

    std::vector<Ctx> stack_;
    std::string key_;
    std::string text_;
    bool in_key_{false};
    bool in_string_{false};
    bool keep_{false};

    json::object& message() { return row["message"].get_object(); }

    json::array& blocks() { return message()["content"].get_array(); }

    template <std::size_t N>
    [[nodiscard]] bool key_in(const std::array<std::string_view, N>& keys) const {
        for (const auto k : keys) {
            if (key_ == k) {
                return true;
            }
        }
        return false;
    }

    // Whether the string starting now is kept.
    [[nodiscard]] bool wanted() const {
        if (stack_.empty()) {
            return false;
        }
        switch (stack_.back()) {
        case Ctx::top:
            return key_in(TOP_KEYS);
        case Ctx::message:
            return key_ == "content";
        case Ctx::block:
            return key_in(BLOCK_KEYS);
        case Ctx::content:
            return false; // a string element: kept as null below
        case Ctx::other:
            return false;
        }
        return false;
    }

    void scalar_at_top(json::value v) {
        if (key_in(TOP_KEYS)) {
            row[key_] = std::move(v);
        } else if (key_ == "message") {
            row["message"] = nullptr; // not an object: a malformed row
        }
    }

    void scalar_in_block(json::value v) {
        if (key_in(BLOCK_KEYS)) {
            blocks().back().get_object()[key_] = std::move(v);
        }
    }

    // A string, number, bool or null value: kept where it is one of the kept fields.
    void scalar(json::value v) {
        if (stack_.empty()) {
            return; // a top-level scalar: not a row
        }
        switch (stack_.back()) {
        case Ctx::top:
            scalar_at_top(std::move(v));
            break;
        case Ctx::message:
            if (key_ == "content") {
                message()["content"] = v.is_string() ? std::move(v) : json::value(nullptr);
            }
            break;
        case Ctx::content:
            blocks().emplace_back(nullptr); // not a content block
            break;
        case Ctx::block:
            scalar_in_block(std::move(v));
            break;
        case Ctx::other:
            break;
        }
    }
};

} // namespace

std::optional<json::object> read_listing_row(std::string_view line) {
    json::basic_parser<RowHandler> p(json::parse_options{});
    boost::system::error_code ec;
    const auto n = p.write_some(false, line.data(), line.size(), ec);
    if (ec || n != line.size() || !p.handler().top_is_object) {
        return std::nullopt;
    }
    return std::move(p.handler().row);
}

FramePtr feed_turn_scan(json::object row, TurnScan& scan) {
    const auto* type = row.if_contains("type");
    if (type == nullptr || !type->is_string() || !is_frame_type(type->get_string())) {
        return nullptr;
    }
    auto f = Frame::from_row(std::move(row));
    return scan.opens_turn(*f) ? f : nullptr;
}

} // namespace sluice::hub
