// Tests of PartialTurn: the open turn's message as far as it streamed.
#include <sluice/hub/partial.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

using sluice::hub::PartialTurn;
namespace llm = sluice::llm;
namespace json = boost::json;

json::object parsed(const PartialTurn& p) {
    return json::parse(p.json()).as_object();
}

TEST(PartialTurn, AccumulatesTextThinkingAndToolInputPerBlockInOrder) {
    PartialTurn p;
    EXPECT_TRUE(p.empty());
    p.add(llm::Thinking{"Let me "});
    p.add(llm::Thinking{"think."});
    p.add(llm::Text{"First sentence. "});
    p.add(llm::ToolUseDelta{"toolu_1", R"({"command":)"});
    p.add(llm::ToolUseDelta{"toolu_1", R"("ls"})"});
    p.add(llm::Text{"Second."});
    p.add(llm::ToolResultDelta{"toolu_1", "output is not part of the message"});
    const auto o = parsed(p);
    EXPECT_EQ(o.at("thinking").as_string(), "Let me think.");
    EXPECT_EQ(o.at("text").as_string(), "First sentence. Second.");
    ASSERT_EQ(o.at("tools").as_array().size(), 1U);
    EXPECT_EQ(o.at("tools").as_array()[0].at("id").as_string(), "toolu_1");
    EXPECT_EQ(o.at("tools").as_array()[0].at("input").as_string(), R"({"command":"ls"})");
    EXPECT_EQ(o.at("missing_bytes").to_number<std::uint64_t>(), 0U);
}

TEST(PartialTurn, ClearForgetsEverythingAndChangesTheVersion) {
    PartialTurn p;
    p.add(llm::Text{"abc"});
    const auto v = p.version();
    p.clear();
    EXPECT_TRUE(p.empty());
    EXPECT_NE(p.version(), v);
    EXPECT_FALSE(parsed(p).contains("text"));
}

TEST(PartialTurn, KeepsTheNewestBytesAndCountsWhatTheBoundCut) {
    PartialTurn p(10);
    p.add(llm::Thinking{"0123456"}); // 7
    p.add(llm::Text{"abcdefgh"});    // 15 in all: the oldest 5 go
    EXPECT_EQ(p.bytes(), 10U);
    EXPECT_EQ(p.missing_bytes(), 5U);
    const auto o = parsed(p);
    EXPECT_EQ(o.at("thinking").as_string(), "56");
    EXPECT_EQ(o.at("text").as_string(), "abcdefgh");
    EXPECT_EQ(o.at("missing_bytes").to_number<std::uint64_t>(), 5U);
    p.add(llm::Text{"XY"}); // the whole thinking block goes
    EXPECT_FALSE(parsed(p).contains("thinking"));
    EXPECT_EQ(p.missing_bytes(), 7U);
    EXPECT_FALSE(p.empty());
}

TEST(PartialTurn, NeverCutsACharacterInHalf) {
    PartialTurn p(4);
    p.add(llm::Text{"\xC3\xA9\xC3\xA9\xC3\xA9"}); // "ééé", 6 bytes: cut 2, one whole character
    EXPECT_EQ(parsed(p).at("text").as_string(), "\xC3\xA9\xC3\xA9");
    p.add(llm::Text{"a"}); // 5 bytes: the cut must take a whole character (2), not 1
    EXPECT_EQ(
        parsed(p).at("text").as_string(),
        "\xC3\xA9"
        "a");
    EXPECT_EQ(p.missing_bytes(), 4U);
}

} // namespace
