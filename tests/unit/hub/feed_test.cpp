// Unit tests of hub/feed.hpp: the fan-out core alone — no agent, no disk, no io_context.
#include <sluice/conversation/frame.hpp>
#include <sluice/hub/feed.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace sluice::hub {
namespace {

using Kind = OutEvent::Kind;

FramePtr prompt(const std::string& text) {
    return Frame::from_row(boost::json::object{
        {"type", "user"}, {"message", boost::json::object{{"role", "user"}, {"content", text}}}});
}

FramePtr answer(const std::string& text) {
    boost::json::array content{boost::json::object{{"type", "text"}, {"text", text}}};
    return Frame::from_row(boost::json::object{
        {"type", "assistant"},
        {"message", boost::json::object{{"role", "assistant"}, {"content", std::move(content)}}}});
}

// One whole turn: a prompt and its answer, published as a source publishes them.
void turn(Feed& feed, int n) {
    feed.append(prompt("prompt " + std::to_string(n)));
    feed.append(answer("answer " + std::to_string(n)));
    feed.published();
}

std::vector<OutEvent> collect(Feed& feed, Subscriber& sub, const FeedHead& head = {}) {
    std::vector<OutEvent> out;
    (void)feed.collect(sub, out, head);
    return out;
}

// The bytes a batch's `gap` reports lost (0: no gap).
std::uint64_t gap_of(const std::vector<OutEvent>& out) {
    std::uint64_t gap = 0;
    for (const auto& ev : out) {
        if (ev.kind == Kind::gap) {
            gap = boost::json::parse(ev.json())
                      .as_object()
                      .at("dropped_bytes")
                      .to_number<std::uint64_t>();
        }
    }
    return gap;
}

std::size_t turns_in(const HistoryPage& page) {
    return boost::json::parse(page.json()).as_object().at("turns").as_array().size();
}

std::uint64_t end_of(const HistoryPage& page) {
    return boost::json::parse(page.json()).as_object().at("end").to_number<std::uint64_t>();
}

TEST(Feed, HistoryHoldsEveryFrameHeldWhenAsked) {
    // The newest page was served stale while the window grew by less than a quarter of it: four
    // turns, and every answer listed only the first (issue 24).
    Feed feed("s-1", "e-1", Budget{});
    auto empty = feed.history(std::nullopt, feed.window().end(), 20);
    ASSERT_TRUE(empty);
    EXPECT_EQ(turns_in(*empty), 0U);
    EXPECT_EQ(end_of(*empty), 0U);
    for (int n = 1; n <= 4; ++n) {
        turn(feed, n);
        auto page = feed.history(std::nullopt, feed.window().end(), 20);
        ASSERT_TRUE(page);
        EXPECT_EQ(turns_in(*page), static_cast<std::size_t>(n));
        EXPECT_EQ(end_of(*page), feed.window().end());
        EXPECT_NE(page->json().find("answer " + std::to_string(n)), std::string::npos);
    }
}

TEST(Feed, HistoryPageIsSharedOnlyWhileTheWindowIsTheSame) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    turn(feed, 2);
    auto a = feed.history(std::nullopt, feed.window().end(), 20);
    auto b = feed.history(std::nullopt, feed.window().end(), 20);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->body.get(), b->body.get()); // the same page, shared
    // An older page (before the second turn) stays the same however the window grows.
    auto older = feed.history(std::uint64_t{2}, 2, 20);
    turn(feed, 3);
    auto older_again = feed.history(std::uint64_t{2}, 2, 20);
    ASSERT_TRUE(older && older_again);
    EXPECT_EQ(older->body.get(), older_again->body.get());
    EXPECT_EQ(turns_in(*older_again), 1U);
    // The newest one does not.
    auto c = feed.history(std::nullopt, feed.window().end(), 20);
    ASSERT_TRUE(c);
    EXPECT_NE(c->body.get(), b->body.get());
    EXPECT_EQ(turns_in(*c), 3U);
}

TEST(Feed, JoinMidTurnGetsTheSharedPageThenTheFramesAfterIt) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    feed.append(prompt("prompt 2")); // a turn open
    feed.published();
    auto a = std::make_shared<Subscriber>();
    auto b = std::make_shared<Subscriber>();
    const FeedHead running{.running = true, .turn = 2};
    feed.attach(a, std::nullopt);
    auto out_a = collect(feed, *a, running);
    ASSERT_FALSE(out_a.empty());
    EXPECT_EQ(out_a[0].kind, Kind::connected);
    EXPECT_NE(out_a[0].json().find(R"("state":"running")"), std::string::npos);
    // While `a` holds its page, `b` joins after another frame: the same page, then the frame.
    feed.append(answer("answer 2"));
    feed.published();
    feed.attach(b, std::nullopt);
    auto out_b = collect(feed, *b, running);
    ASSERT_EQ(out_b.size(), 1U);
    EXPECT_EQ(out_b[0].kind, Kind::connected);
    EXPECT_EQ(out_b[0].shared.get(), out_a[0].shared.get()); // built once
    auto more = collect(feed, *b, running); // then the frame after the page, from the window
    ASSERT_EQ(more.size(), 1U);
    EXPECT_EQ(more[0].kind, Kind::frame);
    EXPECT_EQ(more[0].seq, 3U);
    EXPECT_EQ(feed.subscribers(), 2U);
}

TEST(Feed, ConnectedPageIsBuiltAgainWhenTheHeadChanges) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    auto a = std::make_shared<Subscriber>();
    feed.attach(a, std::nullopt);
    auto idle = collect(feed, *a, FeedHead{.turn = 1});
    ASSERT_FALSE(idle.empty());
    EXPECT_NE(idle[0].json().find(R"("state":"idle")"), std::string::npos);
    const std::string pending = R"([{"type":"system","subtype":"permission_request"}])";
    auto b = std::make_shared<Subscriber>();
    feed.attach(b, std::nullopt);
    auto waiting = collect(feed, *b, FeedHead{.running = true, .turn = 2, .permissions = pending});
    ASSERT_FALSE(waiting.empty());
    EXPECT_NE(waiting[0].shared.get(), idle[0].shared.get());
    EXPECT_NE(waiting[0].json().find(R"("state":"running")"), std::string::npos);
    EXPECT_NE(waiting[0].json().find("permission_request"), std::string::npos);
    // Only whether the agent waits on the person changed (a hook's Notification): built again.
    auto c = std::make_shared<Subscriber>();
    feed.attach(c, std::nullopt);
    auto notified = collect(
        feed, *c, FeedHead{.running = true, .waiting = true, .turn = 2, .permissions = pending});
    ASSERT_FALSE(notified.empty());
    EXPECT_NE(notified[0].shared.get(), waiting[0].shared.get());
    EXPECT_NE(notified[0].json().find(R"("state":"waiting")"), std::string::npos);
}

TEST(Feed, ResumesByLastEventIdOfItsEpochOnly) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    turn(feed, 2); // frames 0..3
    auto same = std::make_shared<Subscriber>();
    feed.attach(same, "e-1:1");
    auto out = collect(feed, *same);
    ASSERT_EQ(out.size(), 3U);
    EXPECT_EQ(out[0].kind, Kind::resumed);
    EXPECT_EQ(out[1].seq, 2U);
    EXPECT_EQ(out[2].seq, 3U);
    auto other = std::make_shared<Subscriber>();
    feed.attach(other, "e-0:1"); // another epoch's seq 1 is not this one's
    out = collect(feed, *other);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out[0].kind, Kind::connected);
}

TEST(Feed, AStalledViewerLosesPreviewsOnlyAndIsToldHowMany) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    auto stalled = std::make_shared<Subscriber>();
    feed.attach(stalled, std::nullopt);
    (void)collect(feed, *stalled);
    const std::string chunk(4096, 'x');
    for (int i = 0; i < 40; ++i) { // 160 KiB into a 64 KiB lane
        feed.preview(llm::Text{chunk});
    }
    auto out = collect(feed, *stalled, FeedHead{.running = true});
    const auto gap = gap_of(out);
    EXPECT_GT(gap, 0U);
    EXPECT_EQ(feed.preview_dropped_bytes(), gap);
    feed.append(prompt("prompt 2")); // a semantic frame is never dropped
    feed.published();
    out = collect(feed, *stalled, FeedHead{.running = true});
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back().kind, Kind::frame);
    EXPECT_EQ(out.back().seq, 2U);
    feed.detach(stalled);
    EXPECT_EQ(feed.subscribers(), 0U);
    EXPECT_EQ(feed.preview_dropped_bytes(), gap); // counted still, once it has gone
}

TEST(Feed, ReplaceStartsEveryViewerAgainUnderTheNewEpoch) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    auto sub = std::make_shared<Subscriber>();
    feed.attach(sub, std::nullopt);
    (void)collect(feed, *sub);
    auto before = feed.history(std::nullopt, feed.window().end(), 20);
    feed.replace("e-2", Window(Budget{}), /*restart=*/true);
    EXPECT_EQ(feed.epoch(), "e-2");
    auto out = collect(feed, *sub);
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].kind, Kind::connected);
    EXPECT_NE(out[0].json().find(R"("epoch":"e-2")"), std::string::npos);
    auto after = feed.history(std::nullopt, feed.window().end(), 20);
    ASSERT_TRUE(before && after);
    EXPECT_EQ(turns_in(*after), 0U); // no page of the old conversation survives
}

TEST(Feed, ViewersOfAFeedNotReadyWaitAndResumeWhereTheyWere) {
    Feed feed("s-1", "e-1", Budget{});
    feed.unready();
    EXPECT_FALSE(feed.ready());
    auto sub = std::make_shared<Subscriber>();
    feed.attach(sub, "e-1:1");
    EXPECT_TRUE(collect(feed, *sub).empty()); // nothing is known yet
    EXPECT_EQ(feed.subscribers(), 1U);
    Window w(Budget{});
    for (int i = 0; i < 4; ++i) {
        w.append(i % 2 == 0 ? prompt("p") : answer("a"));
    }
    feed.replace("e-1", std::move(w), /*restart=*/true);
    EXPECT_TRUE(feed.ready());
    auto out = collect(feed, *sub);
    ASSERT_EQ(out.size(), 3U);
    EXPECT_EQ(out[0].kind, Kind::resumed);
    EXPECT_EQ(out[1].seq, 2U);
}

TEST(Feed, PreviewsAnotherNodeSentThatNeverArrivedAreAGap) {
    Feed feed("s-1", "e-1", Budget{});
    turn(feed, 1);
    auto sub = std::make_shared<Subscriber>();
    feed.attach(sub, std::nullopt);
    (void)collect(feed, *sub);
    feed.preview_at(0, llm::Text{"abc"});
    EXPECT_EQ(feed.preview_offset(), 3U);
    feed.preview_at(10, llm::Text{"de"}); // bytes 3..10 never came
    EXPECT_EQ(feed.preview_offset(), 12U);
    auto out = collect(feed, *sub, FeedHead{.running = true, .partial_open = true});
    const auto gap = gap_of(out);
    EXPECT_EQ(gap, 7U);
    feed.append(answer("done"));
    feed.published();
    EXPECT_EQ(feed.preview_offset(), 0U); // a new position
}

TEST(Feed, PermissionEventGoesToEveryViewerAfterTheFramesBeforeIt) {
    Feed feed("c-1", "e-1", Budget{});
    turn(feed, 1);
    auto sub = std::make_shared<Subscriber>();
    feed.attach(sub, std::nullopt);
    ASSERT_EQ(collect(feed, *sub).at(0).kind, Kind::connected);
    feed.append(prompt("prompt 2"));
    feed.published();
    const std::string row = R"({"row":{"type":"system","subtype":"permission_request"}})";
    feed.permission(row); // a hooked prompt: an event, never a frame of the file's numbering
    const auto out = collect(feed, *sub);
    ASSERT_EQ(out.size(), 2U);
    EXPECT_EQ(out[0].kind, Kind::frame);
    EXPECT_EQ(out[1].kind, Kind::permission);
    EXPECT_EQ(out[1].json(), row);
    EXPECT_TRUE(out[1].id.empty());
    EXPECT_STREQ(wire::event_name(out[1].kind), "permission");
    EXPECT_EQ(feed.window().end(), 3U); // two frames of turn 1, the prompt: no frame added
}

TEST(Feed, KnowsWhenItsRecentFramesWerePublishedAndForgetsOlderOnesAndOtherEpochs) {
    Feed feed("s-1", "e-1", Budget{});
    EXPECT_FALSE(feed.published_at(0)); // nothing published yet
    turn(feed, 0);                      // frames 0 and 1
    const auto first = feed.published_at(0);
    ASSERT_TRUE(first);
    EXPECT_EQ(feed.published_at(1), first); // one publish, one time
    EXPECT_FALSE(feed.published_at(2));     // not yet published
    turn(feed, 1);                          // frames 2 and 3
    ASSERT_TRUE(feed.published_at(3));
    EXPECT_GE(*feed.published_at(3), *first);
    for (std::size_t i = 2; i < PUBLISH_STAMPS + 2; ++i) {
        turn(feed, static_cast<int>(i));
    }
    // 66 publishes: the first two are no longer held; the third's time is, but its frames
    // (4, 5) cannot be told from older ones, so the oldest held answers nothing either.
    EXPECT_FALSE(feed.published_at(0));
    EXPECT_FALSE(feed.published_at(4));
    EXPECT_TRUE(feed.published_at(6));
    EXPECT_TRUE(feed.published_at(feed.window().end() - 1));
    feed.replace("e-2", Window(Budget{}), true);
    EXPECT_FALSE(feed.published_at(0)); // another epoch: its positions start again
}

} // namespace
} // namespace sluice::hub
