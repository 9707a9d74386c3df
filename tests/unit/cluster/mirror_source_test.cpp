// Unit tests of cluster/mirror_source.hpp (scale-out) against its seat's feed: waiting viewers,
// resume, contiguity, epochs, previews, the owner's figures.
#include "unit/hub/hub_test_support.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/hub/seat.hpp>

#include <gtest/gtest.h>

namespace sluice::cluster {
namespace {

using namespace hub;

using namespace hub::test;
using Kind = OutEvent::Kind;

struct MirrorRig {
    MirrorRig()
        : writer(std::make_shared<Writer>(WRITER_QUEUE_CAPACITY)) {}

    ~MirrorRig() { writer->drain(); }

    MirrorRig(const MirrorRig&) = delete;
    MirrorRig& operator=(const MirrorRig&) = delete;

    std::shared_ptr<Seat> open() {
        SeatSpec spec;
        spec.id = "s-mirror";
        spec.epoch = "e-one";
        return MirrorSource::open(
            io, spec, SeatOptions{{}, nullptr, writer, 2, 20ms, Budget{}}, "node-a");
    }

    std::vector<OutEvent> collect(Seat& seat, Subscriber& sub) {
        return on_strand(io, seat, [&] {
            std::vector<OutEvent> out;
            seat.collect(sub, out);
            return out;
        });
    }

    net::io_context io;
    std::shared_ptr<Writer> writer;
};

MirrorSource& mirror(Seat& seat) {
    auto* source = MirrorSource::of(seat);
    EXPECT_NE(source, nullptr);
    return *source;
}

std::vector<MirrorFrame> frames(std::size_t n, std::size_t from = 0) {
    std::vector<MirrorFrame> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(MirrorFrame{
            Frame::from_row(assistant_row("frame " + std::to_string(from + i))), false});
    }
    return out;
}

TEST(MirrorSeat, HoldsViewersUntilItsFirstResetThenResumesThem) {
    MirrorRig rig;
    auto seat = rig.open();
    EXPECT_TRUE(seat->mirror());
    auto resuming = std::make_shared<Subscriber>();
    auto fresh = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] {
        seat->attach(resuming, std::string("e-one:1"));
        seat->attach(fresh, std::nullopt);
    });
    EXPECT_TRUE(rig.collect(*seat, *resuming).empty()); // nothing known yet: it waits
    on_strand(rig.io, *seat, [&] { mirror(*seat).reset("e-one", 0, frames(4)); });
    auto r = rig.collect(*seat, *resuming);
    ASSERT_EQ(kinds_of(r), (std::vector<Kind>{Kind::resumed, Kind::frame, Kind::frame}));
    EXPECT_EQ(r[1].seq, 2U);
    EXPECT_EQ(r[2].seq, 3U);
    auto f = rig.collect(*seat, *fresh);
    ASSERT_EQ(kinds_of(f), (std::vector<Kind>{Kind::connected}));
}

TEST(MirrorSeat, AppendsOnlyFramesThatFollowItsWindow) {
    MirrorRig rig;
    auto seat = rig.open();
    on_strand(rig.io, *seat, [&] {
        mirror(*seat).reset("e-one", 10, frames(2, 10));
        EXPECT_TRUE(mirror(*seat).append("e-one", 12, frames(1, 12)));
        EXPECT_FALSE(mirror(*seat).append("e-one", 14, frames(1, 14)));   // a hole
        EXPECT_FALSE(mirror(*seat).append("e-other", 13, frames(1, 13))); // another epoch
        EXPECT_TRUE(mirror(*seat).append("e-one", 11, frames(3, 11)));    // 11, 12 held already
        EXPECT_EQ(seat->window().first(), 10U);
        EXPECT_EQ(seat->window().end(), 14U);
        EXPECT_EQ(seat->window().at(13)->json(), frames(1, 13)[0].frame->json());
    });
}

TEST(MirrorSeat, ANewEpochResyncsEveryViewerButAFilledHoleDoesNot) {
    MirrorRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] {
        mirror(*seat).reset("e-one", 0, frames(2));
        seat->attach(sub, std::nullopt);
    });
    ASSERT_EQ(kinds_of(rig.collect(*seat, *sub)), (std::vector<Kind>{Kind::connected}));
    // The same epoch read again (a lost notice): the viewer continues by cursor.
    on_strand(rig.io, *seat, [&] { mirror(*seat).reset("e-one", 0, frames(3)); });
    auto more = rig.collect(*seat, *sub);
    ASSERT_EQ(kinds_of(more), (std::vector<Kind>{Kind::frame}));
    EXPECT_EQ(more[0].seq, 2U);
    // A new epoch: connected again (recovered:false).
    on_strand(rig.io, *seat, [&] { mirror(*seat).reset("e-two", 0, frames(1)); });
    auto again = rig.collect(*seat, *sub);
    ASSERT_EQ(kinds_of(again), (std::vector<Kind>{Kind::connected}));
    EXPECT_EQ(again[0].id, "e-two:0");
}

TEST(MirrorSeat, ShowsPreviewsThatFollowItsWindowAndReportsWhatItMissed) {
    MirrorRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] {
        mirror(*seat).reset("e-one", 0, frames(2));
        seat->attach(sub, std::nullopt);
    });
    ASSERT_EQ(kinds_of(rig.collect(*seat, *sub)), (std::vector<Kind>{Kind::connected}));
    // The owner's previews after frame 1 (position 2): shown in order.
    on_strand(rig.io, *seat, [&] {
        mirror(*seat).preview("e-one", 2, 0, StreamEvent{llm::Text{"abc"}});
    });
    auto p = rig.collect(*seat, *sub);
    ASSERT_EQ(kinds_of(p), (std::vector<Kind>{Kind::preview}));
    EXPECT_NE(p[0].data.find("abc"), std::string::npos);
    // 10 bytes were published at position 2 before this one; 3 arrived: 7 lost, said so.
    on_strand(rig.io, *seat, [&] {
        mirror(*seat).preview("e-one", 2, 10, StreamEvent{llm::Text{"xyz"}});
        mirror(*seat).preview("e-one", 1, 0, StreamEvent{llm::Text{"old"}});    // superseded
        mirror(*seat).preview("e-one", 5, 0, StreamEvent{llm::Text{"new"}});    // frames to come
        mirror(*seat).preview("e-two", 2, 13, StreamEvent{llm::Text{"other"}}); // not its epoch
    });
    auto g = rig.collect(*seat, *sub);
    ASSERT_EQ(kinds_of(g), (std::vector<Kind>{Kind::gap, Kind::preview}));
    EXPECT_EQ(g[0].data, R"({"dropped_bytes":7})");
    EXPECT_NE(g[1].data.find("xyz"), std::string::npos);
    // A viewer joining now gets the open message as a partial, with what this node missed.
    auto late = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(late, std::nullopt); });
    auto c = rig.collect(*seat, *late);
    ASSERT_EQ(kinds_of(c), (std::vector<Kind>{Kind::connected}));
    ASSERT_TRUE(c[0].partial);
    EXPECT_NE(c[0].partial->find(R"("text":"abcxyz")"), std::string::npos) << *c[0].partial;
    EXPECT_NE(c[0].partial->find(R"("missing_bytes":7)"), std::string::npos) << *c[0].partial;
    // The message's frame supersedes it: a viewer joining after gets no partial.
    on_strand(rig.io, *seat, [&] { EXPECT_TRUE(mirror(*seat).append("e-one", 2, frames(1, 2))); });
    auto after = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(after, std::nullopt); });
    auto d = rig.collect(*seat, *after);
    ASSERT_EQ(kinds_of(d), (std::vector<Kind>{Kind::connected}));
    EXPECT_FALSE(d[0].partial);
}

TEST(MirrorSeat, RefusesPromptsItsOwnerMustRun) {
    MirrorRig rig;
    auto seat = rig.open();
    auto r = on_strand(rig.io, *seat, [&] { return seat->submit("hello"); });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, make_error_code(errc::conflict));
    EXPECT_NE(r.error().message.find("node-a"), std::string::npos);
}

} // namespace
} // namespace sluice::cluster
