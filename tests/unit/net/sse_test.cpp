// Tests of the sans-I/O SSE parser: table of WHATWG cases, every split point, limits, fixtures.
#include "support/stub_provider.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/sse.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace sluice;

struct Expected {
    std::string type;
    std::string data;
    std::string id;
};

struct Case {
    const char* name;
    std::string input;
    std::vector<Expected> events;
};

std::vector<sse::Event> parse_whole(std::string_view input) {
    sse::Parser p;
    std::vector<sse::Event> out;
    EXPECT_FALSE(p.feed(input, out));
    return out;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        {"single data line", "data: hello\n\n", {{"message", "hello", ""}}},
        {"named event", "event: ping\ndata: {}\n\n", {{"ping", "{}", ""}}},
        {"multi-line data joined by LF",
         "data: a\ndata: b\ndata:c\n\n",
         {{"message", "a\nb\nc", ""}}},
        {"only one leading space is removed", "data:  two\n\n", {{"message", " two", ""}}},
        {"CRLF line ends", "event: x\r\ndata: 1\r\n\r\n", {{"x", "1", ""}}},
        {"CR line ends", "event: x\rdata: 1\r\r", {{"x", "1", ""}}},
        {"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", {{"message", "a\nb\nc", ""}}},
        {"comments are skipped", ": keepalive\n:\ndata: x\n\n", {{"message", "x", ""}}},
        {"event without data is not dispatched",
         "event: lonely\n\ndata: y\n\n",
         {{"message", "y", ""}}},
        {"empty data field dispatches empty data", "data\n\n", {{"message", "", ""}}},
        {"id persists to later events",
         "id: 7\ndata: a\n\ndata: b\n\n",
         {{"message", "a", "7"}, {"message", "b", "7"}}},
        {"id with NUL is ignored",
         std::string("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n", 33),
         {{"message", "a", "1"}, {"message", "b", "1"}}},
        {"unknown fields are ignored", "foo: bar\ndata: z\n\n", {{"message", "z", ""}}},
        {"leading BOM is dropped",
         "\xEF\xBB\xBF"
         "data: bom\n\n",
         {{"message", "bom", ""}}},
        {"trailing whitespace kept in data",
         "data: {\"a\":1}   \n\n",
         {{"message", "{\"a\":1}   ", ""}}},
        {"unterminated event is not dispatched", "data: partial\n", {}},
        {"done marker", "data: [DONE]\n\n", {{"message", "[DONE]", ""}}},
        {"event type resets after dispatch",
         "event: a\ndata: 1\n\ndata: 2\n\n",
         {{"a", "1", ""}, {"message", "2", ""}}},
    };
    return table;
}

TEST(SseParser, ParsesEveryTableCase) {
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.name);
        const auto got = parse_whole(c.input);
        ASSERT_EQ(got.size(), c.events.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].type, c.events[i].type);
            EXPECT_EQ(got[i].data, c.events[i].data);
            EXPECT_EQ(got[i].id, c.events[i].id);
        }
    }
}

TEST(SseParser, GivesTheSameEventsForEverySplitPoint) {
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.name);
        for (std::size_t cut = 0; cut <= c.input.size(); ++cut) {
            sse::Parser p;
            std::vector<sse::Event> got;
            ASSERT_FALSE(p.feed(std::string_view(c.input).substr(0, cut), got));
            ASSERT_FALSE(p.feed(std::string_view(c.input).substr(cut), got));
            ASSERT_EQ(got.size(), c.events.size()) << "cut at " << cut;
            for (std::size_t i = 0; i < got.size(); ++i) {
                EXPECT_EQ(got[i].data, c.events[i].data) << "cut at " << cut;
                EXPECT_EQ(got[i].type, c.events[i].type) << "cut at " << cut;
            }
        }
    }
}

TEST(SseParser, GivesTheSameEventsFedOneByteAtATime) {
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.name);
        sse::Parser p;
        std::vector<sse::Event> got;
        for (const char ch : c.input) {
            ASSERT_FALSE(p.feed(std::string_view(&ch, 1), got));
        }
        ASSERT_EQ(got.size(), c.events.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].data, c.events[i].data);
        }
    }
}

TEST(SseParser, ReadsRetryOnlyWhenAllDigits) {
    const auto got = parse_whole("retry: 1500\ndata: a\n\nretry: 15x\ndata: b\n\n");
    ASSERT_EQ(got.size(), 2U);
    EXPECT_EQ(got[0].retry, 1500U);
    EXPECT_FALSE(got[1].retry.has_value());
}

TEST(SseParser, RejectsALineOverTheLimit) {
    sse::Parser p({.max_line = 16, .max_event = 1024});
    std::vector<sse::Event> out;
    EXPECT_FALSE(p.feed("data: short\n\n", out));
    EXPECT_EQ(out.size(), 1U);
    // An unterminated line is refused as soon as it passes the limit, not at its end.
    EXPECT_EQ(p.feed("data: 0123456789abcdef", out), errc::payload_too_large);
    EXPECT_EQ(p.feed("data: x\n\n", out), errc::payload_too_large);
    EXPECT_EQ(out.size(), 1U);
}

TEST(SseParser, RejectsAnEventOverTheLimit) {
    sse::Parser p({.max_line = 64, .max_event = 20});
    std::vector<sse::Event> out;
    EXPECT_EQ(
        p.feed("data: 0123456789\ndata: 0123456789\ndata: x\n\n", out), errc::payload_too_large);
    EXPECT_TRUE(out.empty());
}

TEST(SseParser, ReportsAPartialEventAtTheEnd) {
    sse::Parser p;
    std::vector<sse::Event> out;
    EXPECT_FALSE(p.feed("data: a\n\n", out));
    EXPECT_FALSE(p.has_partial());
    EXPECT_FALSE(p.feed("data: b\n", out));
    EXPECT_TRUE(p.has_partial());
    EXPECT_FALSE(p.feed("\n", out));
    EXPECT_FALSE(p.has_partial());
    EXPECT_EQ(out.size(), 2U);
}

TEST(SseParser, RecognisesTheDoneMarker) {
    EXPECT_TRUE(sse::is_done({.data = "[DONE]"}));
    EXPECT_TRUE(sse::is_done({.data = " [DONE] "}));
    EXPECT_FALSE(sse::is_done({.data = "{\"done\":true}"}));
}

TEST(SseParser, CountsEventsAndCommentsOfRealCaptures) {
    struct Fixture {
        const char* path;
        std::size_t events;
        std::uint64_t comments;
    };

    const Fixture fixtures[] = {
        {"anthropics_anthropic-sdk-python/tests_lib_streaming_fixtures_basic_response.txt", 9, 0},
        {"anthropics_anthropic-sdk-python/"
         "tests_lib_streaming_fixtures_incomplete_partial_json_response.txt",
         16,
         0},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_openrouter_test_openrouter_stream_error.yaml.interaction0."
         "sse",
         5,
         17},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_anthropic_test_pause_turn_web_search_streaming_vcr.yaml."
         "interaction0.sse",
         168,
         0},
        {"pydantic_pydantic-ai/"
         "tests_models_cassettes_test_groq_test_tool_use_failed_error_streaming.yaml.interaction0."
         "sse",
         95,
         0},
        {"openai_openai-python/"
         "inline-snapshot_external_"
         "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin",
         34,
         0},
    };
    for (const auto& f : fixtures) {
        SCOPED_TRACE(f.path);
        const auto raw =
            test::StubProvider::read_file(std::string(SLUICE_FIXTURES_DIR) + "/" + f.path);
        const auto bytes = test::StubProvider::terminated_sse(raw);
        // Split into 7-byte pieces to cross every kind of boundary.
        sse::Parser p;
        std::vector<sse::Event> out;
        for (std::size_t off = 0; off < bytes.size(); off += 7) {
            ASSERT_FALSE(p.feed(std::string_view(bytes).substr(off, 7), out));
        }
        EXPECT_EQ(out.size(), f.events);
        EXPECT_EQ(p.comments(), f.comments);
        EXPECT_FALSE(p.has_partial());
    }
}

} // namespace
