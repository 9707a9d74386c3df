// Unit tests of hub/subscriber.hpp: the pure stepper, over a window built in the test (no
// io_context).
#include <sluice/conversation/frame.hpp>
#include <sluice/hub/subscriber.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::hub {
namespace {

using Kind = OutEvent::Kind;

FramePtr user_frame(std::uint64_t n) {
    return Frame::from_row(boost::json::object{
        {"type", "user"},
        {"message", boost::json::object{{"role", "user"}, {"content", "p" + std::to_string(n)}}}});
}

// A seat as the stepper sees it: a window of frames, each opening a turn.
struct FakeSeat {
    explicit FakeSeat(Budget b = {})
        : window(b) {}

    Window window;
    int connected_built{0};

    void add(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            window.append(user_frame(window.end()), /*opens=*/true);
        }
    }

    SeatView view() {
        SeatView v;
        v.window = &window;
        v.seat = "s-1";
        v.epoch = "e";
        v.connected = [this] {
            ++connected_built;
            return SharedPage{
                std::make_shared<const std::string>("{\"connected\":true}"), window.end()};
        };
        return v;
    }

    std::vector<OutEvent> collect(Subscriber& sub) {
        std::vector<OutEvent> out;
        sub.collect(view(), out);
        return out;
    }
};

std::vector<Kind> kinds(const std::vector<OutEvent>& evs) {
    std::vector<Kind> k;
    for (const auto& e : evs) {
        k.push_back(e.kind);
    }
    return k;
}

Budget small_budget() {
    return Budget{4, 0, 1U << 30U, 0}; // keeps the newest 4 frames
}

TEST(Subscriber, ResumesInsideTheWindowAndReplaysEverythingAfter) {
    FakeSeat seat;
    seat.add(10);
    Subscriber sub;
    sub.start(seat.window, "e", "e:4");
    const auto out = seat.collect(sub);
    ASSERT_EQ(out.size(), 6U);
    EXPECT_EQ(out[0].kind, Kind::resumed);
    EXPECT_EQ(out[0].data, R"({"seat":"s-1","epoch":"e","seq":4,"recovered":true,"state":"idle"})");
    for (std::size_t i = 1; i < out.size(); ++i) {
        EXPECT_EQ(out[i].kind, Kind::frame);
        EXPECT_EQ(out[i].seq, 4 + i);
        EXPECT_EQ(out[i].id, "e:" + std::to_string(4 + i));
    }
    EXPECT_TRUE(seat.collect(sub).empty());
    EXPECT_EQ(seat.connected_built, 0);
}

TEST(Subscriber, ResumeDecisionIsAllOrNothing) {
    struct Row {
        const char* last;
        Kind first;
        std::size_t frames; // replayed after `resumed`
    };

    // The window holds 6..9 (cap 4 of 10 frames).
    const std::vector<Row> rows{
        {"e:9", Kind::resumed, 0},       // up to date
        {"e:6", Kind::resumed, 3},       // the front
        {"e:5", Kind::resumed, 4},       // one before the front: everything after it is held
        {"e:4", Kind::connected, 0},     // two before: a replay would have a gap
        {"e:10", Kind::connected, 0},    // from the future
        {"other:7", Kind::connected, 0}, // stale epoch
        {"garbage", Kind::connected, 0}, // malformed
        {"e:-1", Kind::connected, 0},    // "nothing yet", but 0..5 are gone
    };
    for (const auto& r : rows) {
        FakeSeat seat(small_budget());
        seat.add(10);
        ASSERT_EQ(seat.window.first(), 6U);
        Subscriber sub;
        sub.start(seat.window, "e", std::string_view(r.last));
        const auto out = seat.collect(sub);
        ASSERT_FALSE(out.empty()) << r.last;
        EXPECT_EQ(out[0].kind, r.first) << r.last;
        EXPECT_EQ(out.size() - 1, r.frames) << r.last;
        if (r.first == Kind::connected) {
            EXPECT_EQ(out[0].id, "e:9") << r.last;
            EXPECT_EQ(out[0].json(), "{\"connected\":true}");
        }
    }
}

TEST(Subscriber, StartsWithConnectedWithoutALastEventId) {
    FakeSeat seat;
    seat.add(3);
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    const auto out = seat.collect(sub);
    ASSERT_EQ(kinds(out), std::vector<Kind>{Kind::connected});
    EXPECT_EQ(sub.cursor(), 3U);
    seat.add(1);
    EXPECT_EQ(kinds(seat.collect(sub)), std::vector<Kind>{Kind::frame});
}

TEST(Subscriber, FallingBehindTheFrontDuringABurstIsLetGo) {
    FakeSeat seat(small_budget());
    seat.add(2);
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    EXPECT_FALSE(sub.lagged());
    seat.add(10); // the front passes the cursor before the subscriber is stepped
    EXPECT_TRUE(seat.collect(sub).empty()); // nothing more: no page built, none held
    EXPECT_TRUE(sub.lagged());
    EXPECT_EQ(seat.connected_built, 1);
    seat.add(1);
    EXPECT_TRUE(seat.collect(sub).empty());

    // It resumes by Last-Event-ID: its last seq is behind the front, so `connected`.
    Subscriber again;
    again.start(seat.window, "e", std::string_view("e:1"));
    const auto out = seat.collect(again);
    ASSERT_EQ(kinds(out), std::vector<Kind>{Kind::connected});
    EXPECT_EQ(out[0].id, "e:12");
}

// Large rows batch by weight, not by count: what a writing subscriber holds stays small
// however many rows it is behind, and every row still comes, in order.
TEST(Subscriber, BatchesLargeRowsByTheirWeight) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    const std::string big(4000, 'x');
    for (int i = 0; i < 40; ++i) {
        seat.window.append(
            Frame::from_row(boost::json::object{
                {"type", "user"},
                {"message", boost::json::object{{"role", "user"}, {"content", big}}}}),
            /*opens=*/true);
    }
    const std::size_t weight = seat.window.at(1)->wire_bytes();
    const std::size_t per_batch = (SUBSCRIBER_BATCH_BYTES + weight - 1) / weight;
    ASSERT_LT(per_batch, SUBSCRIBER_BATCH_FRAMES);
    std::uint64_t next = 0;
    while (next < seat.window.end()) {
        const auto out = seat.collect(sub);
        ASSERT_FALSE(out.empty());
        EXPECT_LE(out.size(), per_batch);
        for (const auto& e : out) {
            EXPECT_EQ(e.seq, next++);
        }
    }
    EXPECT_EQ(sub.frames_sent(), 40U);
}

TEST(Subscriber, SendsPreviewsOnlyOnceEveryFrameIsOut) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    seat.add(SUBSCRIBER_BATCH_FRAMES + 6);
    sub.push_preview(llm::Text{"after the frames"});
    auto out = seat.collect(sub);
    EXPECT_EQ(out.size(), SUBSCRIBER_BATCH_FRAMES);
    for (const auto& e : out) {
        EXPECT_EQ(e.kind, Kind::frame);
    }
    out = seat.collect(sub);
    ASSERT_EQ(out.size(), 7U);
    EXPECT_EQ(out.back().kind, Kind::preview);
    EXPECT_EQ(out.back().data, R"({"kind":"text","delta":"after the frames"})");
}

TEST(Subscriber, DiscardsPreviewsSupersededByAFrameWithoutAGap) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    sub.push_preview(llm::Text{"carried by the frame"});
    seat.add(1);
    sub.frames_published();
    EXPECT_EQ(kinds(seat.collect(sub)), std::vector<Kind>{Kind::frame});
    EXPECT_EQ(sub.gap_bytes(), 0U);
}

TEST(Subscriber, ReportsAGapOnceWithTheExactBytesLost) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    const std::string kib(1024, 'x');
    for (int i = 0; i < 100; ++i) {
        sub.push_preview(llm::Text{kib}); // a stalled viewer: 100 KiB into a 64 KiB lane
    }
    EXPECT_LE(sub.preview_retained(), SUBSCRIBER_PREVIEW_LIMITS.retained_budget);
    const std::uint64_t lost = 100 * 1024 - sub.preview_retained();
    ASSERT_GT(lost, 0U);
    auto out = seat.collect(sub);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out[0].kind, Kind::gap);
    EXPECT_EQ(out[0].data, R"({"dropped_bytes":)" + std::to_string(lost) + "}");
    EXPECT_EQ(sub.gap_bytes(), lost);
    std::uint64_t shown = 0;
    std::size_t gaps = 0;
    for (;;) {
        for (const auto& e : out) {
            gaps += e.kind == Kind::gap ? 1 : 0;
            if (e.kind == Kind::preview) {
                shown += boost::json::parse(e.data).at("delta").as_string().size();
            }
        }
        out = seat.collect(sub);
        if (out.empty()) {
            break;
        }
    }
    EXPECT_EQ(gaps, 1U);                   // reported once
    EXPECT_EQ(shown + lost, 100U * 1024U); // every byte is shown or reported lost
}

TEST(Subscriber, PlacesTurnStateEventsBetweenTheRightFrames) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    sub.push_turn_state(seat.window.end(), R"({"turn":1,"state":"started"})");
    seat.add(2);
    sub.push_turn_state(seat.window.end(), R"({"turn":1,"state":"ended"})");
    seat.add(1);
    const auto out = seat.collect(sub);
    EXPECT_EQ(
        kinds(out),
        (std::vector<Kind>{Kind::turn, Kind::frame, Kind::frame, Kind::turn, Kind::frame}));
    EXPECT_EQ(out[0].data, R"({"turn":1,"state":"started"})");
    EXPECT_EQ(out[3].data, R"({"turn":1,"state":"ended"})");
}

TEST(Subscriber, ResyncsInsteadOfHoldingTooManyTurnStates) {
    FakeSeat seat;
    Subscriber sub;
    sub.start(seat.window, "e", std::nullopt);
    (void)seat.collect(sub);
    for (std::size_t i = 0; i <= SUBSCRIBER_CONTROL_CAP; ++i) {
        sub.push_turn_state(seat.window.end(), R"({"turn":1,"state":"started"})");
    }
    const auto out = seat.collect(sub);
    EXPECT_EQ(kinds(out), std::vector<Kind>{Kind::connected});
    EXPECT_EQ(sub.resyncs(), 1U);
}

} // namespace
} // namespace sluice::hub

namespace sluice::hub {
namespace {

// A joiner mid-turn: the previews queued between attach and its first step are in the partial
// its `connected` carries, so they are not sent again (nothing shown twice); without a partial
// they are sent as usual.
TEST(Subscriber, APartialOnConnectedOrResumedReplacesThePreviewsQueuedBeforeIt) {
    FakeSeat seat;
    seat.add(2);
    const auto partial = std::make_shared<const std::string>(R"(,"partial":{"text":"ab"})");
    for (const bool resume : {false, true}) {
        Subscriber sub;
        sub.start(seat.window, "e", resume ? std::optional<std::string_view>("e:1") : std::nullopt);
        sub.push_preview(llm::Text{"a"});
        sub.push_preview(llm::Text{"b"});
        auto v = seat.view();
        v.partial = [partial] { return partial; };
        std::vector<OutEvent> out;
        sub.collect(v, out);
        ASSERT_EQ(kinds(out), std::vector<Kind>{resume ? Kind::resumed : Kind::connected});
        EXPECT_EQ(out.front().partial, partial);
        const auto text = wire::sse_text(out.front());
        EXPECT_NE(text.find(R"(,"partial":{"text":"ab"}})"), std::string::npos) << text;
        out.clear();
        sub.collect(v, out);
        EXPECT_EQ(kinds(out), std::vector<Kind>{}) << "previews sent twice";
    }
    Subscriber plain; // no partial: the queued previews follow `connected`
    plain.start(seat.window, "e", std::nullopt);
    plain.push_preview(llm::Text{"a"});
    (void)seat.collect(plain);
    EXPECT_EQ(kinds(seat.collect(plain)), std::vector<Kind>{Kind::preview});
}

} // namespace
} // namespace sluice::hub
