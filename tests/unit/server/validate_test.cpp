// Table tests of the one validator of `send` and `more` (HTTP and WebSocket share it).
#include <sluice/conversation/window.hpp>
#include <sluice/server/validate.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace sluice;
using namespace sluice::server;

TEST(ValidateSend, AcceptsANonEmptyTextAndNamesTheFieldOtherwise) {
    struct Row {
        const char* body;
        bool ok;
        const char* reason_has;
    };

    const Row rows[] = {
        {R"({"text":"hi"})", true, ""},
        {R"({"text":"hi","extra":1})", true, ""},
        {R"({})", false, "'text'"},
        {R"({"text":null})", false, "required"},
        {R"({"text":5})", false, "must be a string"},
        {R"({"text":["a"]})", false, "must be a string"},
        {R"({"text":""})", false, "must not be empty"},
    };
    for (const auto& r : rows) {
        SendOp op;
        const auto refused = validate_send(json::parse(r.body).as_object(), op);
        EXPECT_EQ(!refused, r.ok) << r.body;
        if (refused) {
            EXPECT_EQ(refused->code, make_error_code(errc::bad_request)) << r.body;
            EXPECT_NE(refused->message.find(r.reason_has), std::string::npos)
                << r.body << ": " << refused->message;
        } else {
            EXPECT_EQ(op.text, "hi");
        }
    }
}

TEST(ValidateMore, TakesAPositionAndOneToSubscribeTurnsTurns) {
    const auto limit = std::to_string(SUBSCRIBE_TURNS);

    struct Row {
        const char* before; // JSON text or nullptr (absent)
        const char* turns;
        bool ok;
        std::optional<std::uint64_t> want_before;
        std::size_t want_turns;
        const char* reason_has;
    };

    const Row rows[] = {
        {nullptr, nullptr, true, std::nullopt, SUBSCRIBE_TURNS, ""},
        {"null", "null", true, std::nullopt, SUBSCRIBE_TURNS, ""},
        {"0", "1", true, 0, 1, ""},
        {"42", "20", true, 42, 20, ""},
        {"18446744073709551615", nullptr, true, 18446744073709551615ULL, SUBSCRIBE_TURNS, ""},
        {"-1", nullptr, false, std::nullopt, 0, "'before'"},
        {"1.5", nullptr, false, std::nullopt, 0, "'before'"},
        {R"("abc")", nullptr, false, std::nullopt, 0, "'before'"},
        {nullptr, "0", false, std::nullopt, 0, "'turns'"},
        {nullptr, "21", false, std::nullopt, 0, "from 1 to 20"},
        {nullptr, "-3", false, std::nullopt, 0, "'turns'"},
        {nullptr, R"("5")", false, std::nullopt, 0, "'turns'"},
    };
    for (const auto& r : rows) {
        const json::value b = r.before ? json::parse(r.before) : json::value();
        const json::value t = r.turns ? json::parse(r.turns) : json::value();
        MoreOp op;
        const auto refused = validate_more(r.before ? &b : nullptr, r.turns ? &t : nullptr, op);
        const std::string label =
            std::string(r.before ? r.before : "-") + " / " + (r.turns ? r.turns : "-");
        ASSERT_EQ(!refused, r.ok) << label;
        if (refused) {
            EXPECT_NE(refused->message.find(r.reason_has), std::string::npos)
                << label << ": " << refused->message;
            if (std::string_view(r.reason_has).find("turns") != std::string_view::npos) {
                EXPECT_NE(refused->message.find(limit), std::string::npos)
                    << refused->message; // names the limit
            }
        } else {
            EXPECT_EQ(op.before, r.want_before) << label;
            EXPECT_EQ(op.turns, r.want_turns) << label;
        }
    }
}

TEST(ValidateMore, QueryStringsGoThroughTheSameRules) {
    struct Row {
        const char* text;
        bool is_number;
    };

    for (const auto& r :
         {Row{"7", true},
          Row{"0", true},
          Row{"", false},
          Row{"abc", false},
          Row{"-1", false},
          Row{"3x", false},
          Row{"99999999999999999999999", false}}) {
        const auto v = query_value(r.text);
        EXPECT_EQ(v.is_uint64(), r.is_number) << r.text;
        MoreOp op;
        EXPECT_EQ(!validate_more(&v, nullptr, op), r.is_number) << r.text;
    }
    const auto turns = query_value("21");
    MoreOp op;
    EXPECT_TRUE(validate_more(nullptr, &turns, op).has_value());
}

TEST(ParseRange, TakesOneByteRangeAndRefusesTheRest) {
    struct Row {
        const char* header;
        bool whole;   // no range: the whole resource
        bool refused; // a Refusal
        bool unsatisfiable;
        std::uint64_t first, length;
    };

    const Row rows[] = {
        {"", true, false, false, 0, 0},
        {"bytes=0-9", false, false, false, 0, 10},
        {"bytes=10-", false, false, false, 10, 90},
        {"bytes=-5", false, false, false, 95, 5},
        {"bytes=-500", false, false, false, 0, 100},
        {"bytes=90-1000", false, false, false, 90, 10},
        {"bytes=100-", false, true, true, 0, 0},
        {"bytes=5-2", false, true, false, 0, 0},
        {"bytes=0-1,4-5", false, true, false, 0, 0},
        {"items=0-1", false, true, false, 0, 0},
        {"bytes=-0", false, true, false, 0, 0},
        {"bytes=x-", false, true, false, 0, 0},
    };
    for (const auto& r : rows) {
        std::optional<Refusal> refused;
        bool unsatisfiable = false;
        const auto range = parse_range(r.header, 100, refused, unsatisfiable);
        EXPECT_EQ(refused.has_value(), r.refused) << r.header;
        EXPECT_EQ(unsatisfiable, r.unsatisfiable) << r.header;
        if (r.whole || r.refused) {
            EXPECT_FALSE(range) << r.header;
            continue;
        }
        ASSERT_TRUE(range) << r.header;
        EXPECT_EQ(range->first, r.first) << r.header;
        EXPECT_EQ(range->length, r.length) << r.header;
    }
}

} // namespace
