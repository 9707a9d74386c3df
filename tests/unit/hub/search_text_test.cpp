// Tests of hub/search_text.hpp: what a row gives the index (prompts, text, tool names and inputs,
// results' heads and tails) and what it does not (thinking, meta and bookkeeping rows).
#include <sluice/hub/search_text.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sluice::hub {
namespace {

namespace json = boost::json;

std::string text_of(std::string_view row, SearchTextOptions opt = {}) {
    return indexed_text(json::parse(row).as_object(), opt);
}

TEST(SearchText, IndexesPromptsTextToolNamesInputsAndResults) {
    EXPECT_EQ(
        text_of(R"({"type":"user","message":{"role":"user","content":"fix the migration"}})"),
        "fix the migration");
    EXPECT_EQ(
        text_of(R"({"type":"assistant","message":{"content":[{"type":"text","text":"Running it."},)"
                R"({"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make test",)"
                R"("description":"run","timeout":5}},{"type":"tool_use","id":"t2","name":"Grep",)"
                R"("input":{"pattern":"fn main","path":"src/","glob":["*.rs"]}}]}})"),
        "Running it.\nBash\nmake test\nrun\nGrep\nfn main\nsrc/\n*.rs");
    EXPECT_EQ(
        text_of(R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1",)"
                R"("content":"ok 12 passed"},{"type":"tool_result","tool_use_id":"t2","content":)"
                R"([{"type":"text","text":"src/main.rs:1"},{"type":"image"}]}]}})"),
        "ok 12 passed\nsrc/main.rs:1");
}

TEST(SearchText, LeavesOutThinkingUnlessAskedAndMetaAndBookkeepingRows) {
    const auto row = R"({"type":"assistant","message":{"content":[{"type":"thinking","thinking":)"
                     R"("secret plan"},{"type":"text","text":"hello"}]}})";
    EXPECT_EQ(text_of(row), "hello");
    EXPECT_EQ(text_of(row, SearchTextOptions{.thinking = true}), "secret plan\nhello");
    EXPECT_EQ(
        text_of(R"({"type":"user","isMeta":true,"message":{"content":"Caveat: local commands"}})"),
        "");
    EXPECT_EQ(
        text_of(R"({"type":"queue-operation","operation":"enqueue","content":"queued words"})"),
        "");
    EXPECT_EQ(text_of(R"({"type":"last-prompt","lastPrompt":"the last words"})"), "");
    EXPECT_EQ(text_of(R"({"type":"summary","summary":"a summary"})"), "");
    EXPECT_EQ(text_of(R"({"type":"system","subtype":"init","cwd":"/x"})"), "");
    EXPECT_EQ(text_of(R"({"type":"result","result":"done words"})"), "");
}

TEST(SearchText, IndexesTheHeadAndTailOfALongResult) {
    const std::string big = "HEAD" + std::string(100'000, 'm') + "TAIL";
    json::object row{
        {"type", "user"},
        {"message",
         json::object{
             {"content", json::array{json::object{{"type", "tool_result"}, {"content", big}}}}}}};
    const auto t = indexed_text(row);
    EXPECT_TRUE(t.starts_with("HEAD"));
    EXPECT_TRUE(t.ends_with("TAIL"));
    EXPECT_LE(t.size(), SEARCH_RESULT_HEAD_BYTES + SEARCH_RESULT_TAIL_BYTES + 8);
    // Cut at character boundaries: no half of a multi-byte character.
    const auto cut =
        head_and_tail(std::string(SEARCH_RESULT_HEAD_BYTES - 1, 'a') + std::string(20'000, '\xc3'));
    EXPECT_LE(cut.size(), SEARCH_RESULT_HEAD_BYTES + SEARCH_RESULT_TAIL_BYTES + 8);
}

TEST(SearchText, ReadsTimes) {
    EXPECT_EQ(parse_time_ms("1970-01-02"), 86'400'000);
    EXPECT_EQ(parse_time_ms("1970-01-01T00:00:01.250Z"), 1250);
    EXPECT_EQ(parse_time_ms("2026-12-06T03:00:00"), 1796526000000);
    EXPECT_FALSE(parse_time_ms("yesterday"));
    EXPECT_FALSE(parse_time_ms("2026-1-1"));
    EXPECT_EQ(
        row_time_ms(json::parse(R"({"timestamp":"1970-01-01T00:00:02.000Z"})").as_object()), 2000);
    EXPECT_EQ(row_time_ms(json::parse(R"({"type":"user"})").as_object()), 0);
}

} // namespace
} // namespace sluice::hub
