// The connection gate: counted places, a limit, stop hooks and the drained callback.
#include "server/connections.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace {

using sluice::server::Connections;

TEST(Connections, CountsPlacesAndRefusesOverTheLimit) {
    auto c = std::make_shared<Connections>(2);
    auto a = c->enter();
    auto b = c->enter();
    EXPECT_TRUE(a);
    EXPECT_TRUE(b);
    EXPECT_FALSE(c->enter());
    EXPECT_EQ(c->open(), 2U);
    a = Connections::Ticket{};
    EXPECT_EQ(c->open(), 1U);
    auto moved = std::move(b);
    EXPECT_EQ(c->open(), 1U);
    { [[maybe_unused]] auto gone = std::move(moved); }
    EXPECT_EQ(c->open(), 0U);
}

TEST(Connections, CloseStopsEveryoneOnceAndReportsDrainedAtZero) {
    auto c = std::make_shared<Connections>(10);
    auto a = c->enter();
    auto b = c->enter();
    int stops_a = 0;
    int stops_b = 0;
    int drained = 0;
    a.on_stop([&] { ++stops_a; });
    b.on_stop([&] { ++stops_b; });
    c->close([&] { ++drained; });
    EXPECT_TRUE(c->closing());
    EXPECT_EQ(stops_a, 1);
    EXPECT_EQ(stops_b, 1);
    EXPECT_FALSE(c->enter());          // refuses new work
    c->close([&] { drained += 100; }); // a second close changes nothing
    EXPECT_EQ(stops_a, 1);
    a = Connections::Ticket{};
    EXPECT_EQ(drained, 0);
    // A hook set after close (a stream that starts late) runs at once.
    int late = 0;
    b.on_stop([&] { ++late; });
    EXPECT_EQ(late, 1);
    b = Connections::Ticket{};
    EXPECT_EQ(drained, 1);
    EXPECT_EQ(c->open(), 0U);
}

TEST(Connections, CloseWithNothingOpenIsDrainedAtOnce) {
    auto c = std::make_shared<Connections>(1);
    int drained = 0;
    c->close([&] { ++drained; });
    EXPECT_EQ(drained, 1);
}

} // namespace
