// Tests of StreamEvent lanes, payload sizes and the JSON round trip of every event.
#include <sluice/core/event.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice;

TEST(StreamEvent, PreviewBytesCountsUtf8BytesOfPreviewsOnly) {
    EXPECT_EQ(preview_bytes(llm::Text{"h\xC3\xA9"}), 3U);
    EXPECT_EQ(preview_bytes(llm::Thinking{"abc"}), 3U);
    EXPECT_EQ(preview_bytes(llm::ToolUseDelta{"t1", "{\"a\""}), 4U);
    EXPECT_EQ(preview_bytes(llm::ToolResultDelta{"t1", "out"}), 3U);
    EXPECT_FALSE(preview_bytes(llm::ToolUseStart{"bash", "t1"}));
    EXPECT_FALSE(preview_bytes(llm::ToolResult{"t1", "x", false}));
    EXPECT_FALSE(preview_bytes(session::Done{}));
    EXPECT_FALSE(preview_bytes(agent::SteeringDelivered{"go"}));
}

TEST(StreamEvent, EveryEventRoundTripsThroughJson) {
    auto history = std::make_shared<std::vector<session::HistoryMessage>>();
    history->push_back(std::make_shared<const boost::json::value>(
        boost::json::parse(R"({"role":"user","content":"hi"})")));
    const std::vector<StreamEvent> all = {
        llm::Text{"hello"},
        llm::Thinking{"hmm"},
        llm::ToolUseStart{"bash", "toolu_1"},
        llm::ToolUseDelta{"toolu_1", "{\"cmd\":"},
        llm::ToolUse{"bash", "toolu_1", boost::json::parse(R"({"cmd":"ls"})")},
        llm::ToolResult{"toolu_1", "a\nb", true},
        llm::ToolResultDelta{"toolu_1", "a\n"},
        session::MessageHistory{history},
        session::Usage{10, 20, 3, 4, "claude"},
        session::Done{},
        session::Error{"boom", session::Outcome::cancelled},
        session::Notice{"retrying"},
        agent::SubagentStart{"toolu_2", "explore"},
        agent::SubagentUpdate{"toolu_2", "reading"},
        agent::SubagentDone{"toolu_2", "found it", false},
        agent::SteeringDelivered{"focus"},
    };
    ASSERT_EQ(all.size(), std::variant_size_v<StreamEvent>);
    for (const auto& ev : all) {
        const auto encoded = to_json(ev);
        EXPECT_EQ(encoded.at("type").as_string(), event_type(ev));
        const auto decoded = event_from_json(encoded);
        ASSERT_TRUE(decoded) << boost::json::serialize(encoded);
        EXPECT_EQ(decoded->index(), ev.index());
        EXPECT_EQ(to_json(*decoded), encoded);
    }
}

TEST(StreamEvent, DecodingRejectsUnknownAndIncompleteObjects) {
    EXPECT_FALSE(event_from_json(boost::json::parse(R"({"type":"nope"})")));
    EXPECT_FALSE(event_from_json(boost::json::parse(R"({"type":"text"})")));
    EXPECT_FALSE(event_from_json(boost::json::parse(R"({"type":"tool_result","tool_id":"x"})")));
    EXPECT_FALSE(event_from_json(boost::json::parse(R"([1,2])")));
    EXPECT_FALSE(
        event_from_json(boost::json::parse(R"({"type":"error","message":"m","outcome":"?"})")));
}

} // namespace
