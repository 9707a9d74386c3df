// Tests of RelayQueue, the relay's sans-I/O byte policy: no threads, no io_context.
#include <sluice/core/relay_queue.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using namespace sluice;

void expect_conserved(const RelayQueue& q) {
    const auto& c = q.counters();
    EXPECT_EQ(c.produced, c.forwarded + c.dropped + c.retained);
    EXPECT_LE(c.retained, q.limits().retained_budget);
    EXPECT_LE(c.retained, c.peak_retained);
}

std::vector<StreamEvent> drain(RelayQueue& q) {
    std::vector<StreamEvent> out;
    while (auto ev = q.pop()) {
        out.push_back(std::move(*ev));
    }
    return out;
}

bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 1;
        if (c >= 0xF0) {
            len = 4;
        } else if (c >= 0xE0) {
            len = 3;
        } else if (c >= 0xC0) {
            len = 2;
        } else if (c >= 0x80) {
            return false;
        }
        if (i + len > s.size()) {
            return false;
        }
        for (std::size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0U) != 0x80U) {
                return false;
            }
        }
        i += len;
    }
    return true;
}

constexpr RelayLimits SMALL{.retained_budget = 64, .coalesce_threshold = 16, .forward_chunk = 8};

TEST(RelayQueue, KeepsSmallDeltasSeparateBelowTheThreshold) {
    RelayQueue q; // seed limits
    for (int i = 0; i < 100; ++i) {
        q.push(llm::Text{"tok" + std::to_string(i)});
    }
    EXPECT_EQ(q.size(), 100U);
    const auto out = drain(q);
    ASSERT_EQ(out.size(), 100U);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(
            std::get<llm::Text>(out[static_cast<std::size_t>(i)]).text, "tok" + std::to_string(i));
    }
    expect_conserved(q);
    EXPECT_EQ(q.counters().dropped, 0U);
}

TEST(RelayQueue, CoalescesSameClassPreviewsAboveTheThreshold) {
    RelayQueue q(SMALL);
    for (int i = 0; i < 5; ++i) {
        q.push(llm::Text{"abcd"}); // retained 20 after five
    }
    EXPECT_EQ(q.size(), 5U);   // 4 + 4 + 4 + 4 = 16 is not above 16; the fifth stays separate
    q.push(llm::Text{"efgh"}); // retained 20 > 16: merges into the tail
    EXPECT_EQ(q.size(), 5U);
    q.push(llm::Thinking{"zz"}); // another class: its own event
    EXPECT_EQ(q.size(), 6U);
    expect_conserved(q);
}

TEST(RelayQueue, AMergedPreviewStopsAtTheForwardChunkAndLeavesWhole) {
    RelayQueue q({.retained_budget = 1000, .coalesce_threshold = 10, .forward_chunk = 16});
    q.push(llm::Text{std::string(12, 'a')});
    std::string produced(12, 'a');
    for (int i = 0; i < 20; ++i) {
        q.push(llm::Text{"bcd"}); // above the threshold: merges, up to 16 bytes an event
        produced += "bcd";
    }
    // 12 + 3, then four of 5 x 3 bytes (the last 4 x 3): each merged event within one chunk.
    ASSERT_EQ(q.size(), 5U);
    const auto out = drain(q);
    ASSERT_EQ(out.size(), 5U); // forwarded whole: nothing was split
    std::string forwarded;
    for (const auto& ev : out) {
        const auto& text = std::get<llm::Text>(ev).text;
        EXPECT_LE(text.size(), 16U);
        forwarded += text;
    }
    EXPECT_EQ(forwarded, produced);
    EXPECT_EQ(q.counters().dropped, 0U);
    expect_conserved(q);
}

TEST(RelayQueue, SemanticEventAtTheTailBlocksMerging) {
    RelayQueue q(SMALL);
    q.push(llm::Text{std::string(20, 'a')});
    q.push(llm::ToolUseStart{"bash", "t1"});
    q.push(llm::Text{"b"});
    EXPECT_EQ(q.size(), 3U);
    const auto out = drain(q);
    ASSERT_EQ(out.size(), 5U); // the 20-byte preview leaves as 8 + 8 + 4
    EXPECT_TRUE(std::holds_alternative<llm::ToolUseStart>(out[3]));
    EXPECT_EQ(std::get<llm::Text>(out[4]).text, "b");
    expect_conserved(q);
}

TEST(RelayQueue, MergesToolDeltasOnlyWithTheSameToolId) {
    RelayQueue q({.retained_budget = 64, .coalesce_threshold = 16, .forward_chunk = 32});
    q.push(llm::ToolUseDelta{"t1", std::string(20, 'x')});
    q.push(llm::ToolUseDelta{"t1", "y"});
    EXPECT_EQ(q.size(), 1U);
    q.push(llm::ToolUseDelta{"t2", "z"});
    EXPECT_EQ(q.size(), 2U);
    q.push(llm::ToolResultDelta{"t2", "r"});
    EXPECT_EQ(q.size(), 3U);
    q.push(llm::ToolResultDelta{"t2", "s"});
    EXPECT_EQ(q.size(), 3U);
    q.push(llm::ToolResultDelta{"t3", "s"});
    EXPECT_EQ(q.size(), 4U);
    std::string t1;
    for (const auto& ev : drain(q)) {
        if (const auto* d = std::get_if<llm::ToolUseDelta>(&ev); d && d->tool_id == "t1") {
            t1 += d->delta;
        }
    }
    EXPECT_EQ(t1, std::string(20, 'x') + "y");
    expect_conserved(q);
}

TEST(RelayQueue, DropsOldestPreviewFirstWhenOverBudget) {
    RelayQueue q({.retained_budget = 10, .coalesce_threshold = 100, .forward_chunk = 100});
    q.push(llm::Text{"aaaa"});
    q.push(llm::Text{"bbbb"});
    q.push(llm::Text{"cccc"}); // needs 2 more bytes: trims "aa" off the front of the oldest
    expect_conserved(q);
    EXPECT_EQ(q.counters().dropped, 2U);
    q.push(llm::Text{"dddddd"}); // needs 6: drops "aa" whole, then trims 4 off "bbbb" (whole)
    const auto out = drain(q);
    ASSERT_EQ(out.size(), 2U);
    EXPECT_EQ(std::get<llm::Text>(out[0]).text, "cccc");
    EXPECT_EQ(std::get<llm::Text>(out[1]).text, "dddddd");
    EXPECT_EQ(q.counters().dropped, 8U);
    EXPECT_EQ(q.take_unreported_dropped(), 8U);
    EXPECT_EQ(q.take_unreported_dropped(), 0U);
    expect_conserved(q);
}

TEST(RelayQueue, TrimsTheOldestSurvivorAtAUtf8Boundary) {
    RelayQueue q({.retained_budget = 8, .coalesce_threshold = 100, .forward_chunk = 100});
    q.push(llm::Text{"\xE2\x82\xAC\xE2\x82\xAC"}); // "€€", 6 bytes
    q.push(llm::Text{"xyz"});                      // needs 1: must drop the whole first "€"
    const auto out = drain(q);
    ASSERT_EQ(out.size(), 2U);
    EXPECT_EQ(std::get<llm::Text>(out[0]).text, "\xE2\x82\xAC");
    EXPECT_EQ(q.counters().dropped, 3U);
    expect_conserved(q);
}

TEST(RelayQueue, OversizedDeltaKeepsItsNewestBudgetBytes) {
    RelayQueue q;                 // seed limits: budget 256 KiB
    q.push(llm::Thinking{"old"}); // another class: may keep a few bytes, never merges
    std::string big;
    for (std::size_t i = 0; big.size() < 3 * RELAY_DELTA_RETAINED_BUDGET_BYTES; ++i) {
        big += "\xF0\x9F\x98\x80" + std::to_string(i % 10); // 5-byte units with a 4-byte char
    }
    q.push(llm::Text{big});
    expect_conserved(q);
    EXPECT_LE(q.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    EXPECT_GE(q.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES - 3);
    std::string got;
    for (const auto& ev : drain(q)) {
        if (!std::holds_alternative<llm::Text>(ev)) {
            continue;
        }
        const auto& t = std::get<llm::Text>(ev).text;
        EXPECT_LE(t.size(), RELAY_FORWARD_CHUNK_BYTES);
        EXPECT_TRUE(valid_utf8(t));
        got += t;
    }
    EXPECT_GE(got.size(), RELAY_DELTA_RETAINED_BUDGET_BYTES - 6);
    EXPECT_TRUE(got == big.substr(big.size() - got.size())); // the newest bytes
    expect_conserved(q);
}

TEST(RelayQueue, SplitsLargePreviewsAtUtf8BoundariesAndKeepsTheVariant) {
    RelayQueue q({.retained_budget = 1000, .coalesce_threshold = 1000, .forward_chunk = 5});
    q.push(llm::ToolResultDelta{
        "t9",
        "ab\xE2\x82\xAC"
        "cd\xE2\x82\xAC"}); // 10 bytes
    std::string all;
    for (const auto& ev : drain(q)) {
        const auto& d = std::get<llm::ToolResultDelta>(ev);
        EXPECT_EQ(d.tool_id, "t9");
        EXPECT_LE(d.delta.size(), 5U);
        EXPECT_TRUE(valid_utf8(d.delta)) << d.delta;
        all += d.delta;
    }
    EXPECT_EQ(
        all,
        "ab\xE2\x82\xAC"
        "cd\xE2\x82\xAC");
    expect_conserved(q);
}

TEST(RelayQueue, SemanticEventsSurviveAFloodInOrder) {
    RelayQueue q; // seed limits
    const std::string chunk(4096, 'p');
    int next_semantic = 0;
    for (int i = 0; i < 2048; ++i) { // 8 MiB of previews
        q.push(llm::Text{chunk});
        if (i % 16 == 0) {
            q.push(llm::ToolResult{"t", std::to_string(next_semantic++), false});
        }
        ASSERT_LE(q.counters().retained, RELAY_DELTA_RETAINED_BUDGET_BYTES);
    }
    int expected = 0;
    for (const auto& ev : drain(q)) {
        if (const auto* r = std::get_if<llm::ToolResult>(&ev)) {
            EXPECT_EQ(r->result, std::to_string(expected++));
        }
    }
    EXPECT_EQ(expected, next_semantic);
    expect_conserved(q);
    EXPECT_EQ(q.counters().retained, 0U);
}

TEST(RelayQueue, DiscardAllCountsLeftoverBytesAsDropped) {
    RelayQueue q;
    q.push(llm::Text{"hello"});
    q.push(session::Done{});
    q.discard_all();
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.counters().dropped, 5U);
    EXPECT_EQ(q.counters().retained, 0U);
    expect_conserved(q);
}

// A randomized run against the policy's promises: conservation and the budget after every
// operation, semantic events complete and in order, forwarded text valid UTF-8 and no larger
// than a chunk, and each forwarded preview's text a piece of what was produced, in order.
TEST(RelayQueue, HoldsEveryPromiseUnderRandomOperations) {
    const std::vector<std::string> pieces = {
        "a", "bc", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "xyz12"};
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng(seed);
        RelayQueue q({.retained_budget = 200, .coalesce_threshold = 60, .forward_chunk = 16});
        std::string produced_text;
        std::string forwarded_text;
        int semantic_in = 0;
        int semantic_out = 0;
        for (int step = 0; step < 5000; ++step) {
            const auto r = rng() % 100;
            if (r < 60) {
                std::string t;
                const auto n = 1 + rng() % 12;
                for (std::uint32_t k = 0; k < n; ++k) {
                    t += pieces[rng() % pieces.size()];
                }
                produced_text += t;
                q.push(llm::Text{t});
            } else if (r < 65) {
                q.push(session::Notice{std::to_string(semantic_in++)});
            } else if (auto ev = q.pop()) {
                if (const auto* t = std::get_if<llm::Text>(&*ev)) {
                    ASSERT_LE(t->text.size(), 16U);
                    ASSERT_TRUE(valid_utf8(t->text));
                    forwarded_text += t->text;
                } else {
                    ASSERT_EQ(std::get<session::Notice>(*ev).text, std::to_string(semantic_out++));
                }
            }
            const auto& c = q.counters();
            ASSERT_EQ(c.produced, c.forwarded + c.dropped + c.retained);
            ASSERT_LE(c.retained, 200U);
        }
        for (auto ev = q.pop(); ev; ev = q.pop()) {
            if (const auto* t = std::get_if<llm::Text>(&*ev)) {
                forwarded_text += t->text;
            } else {
                ASSERT_EQ(std::get<session::Notice>(*ev).text, std::to_string(semantic_out++));
            }
        }
        EXPECT_EQ(semantic_out, semantic_in);
        EXPECT_EQ(q.counters().forwarded, forwarded_text.size());
        EXPECT_EQ(q.counters().produced, produced_text.size());
        EXPECT_TRUE(valid_utf8(forwarded_text));
        // Forwarded text is produced text with some runs removed: a subsequence, checked greedily.
        std::size_t at = 0;
        for (char c : forwarded_text) {
            at = produced_text.find(c, at);
            ASSERT_NE(at, std::string::npos);
            ++at;
        }
    }
}

} // namespace
