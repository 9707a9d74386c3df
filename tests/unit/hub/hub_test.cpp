// Unit tests of hub/hub.hpp: create refusals that name their reason, restore that never stops at
// one seat (unavailable seats listed with their reason, readable, removable).
#include "unit/hub/hub_test_support.hpp"

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/seat_meta.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace sluice::hub {
namespace {

using namespace test;

struct HubRig {
    HubRig() {
        cfg.data_dir = dir.path() / "data";
        cfg.make_agent = fake_factory(seen);
        cfg.max_seats = 3;
    }

    std::unique_ptr<Hub> make() { return std::make_unique<Hub>(io, cfg); }

    [[nodiscard]] std::size_t seat_dirs() const {
        std::error_code ec;
        std::size_t n = 0;
        for (auto it = std::filesystem::directory_iterator(cfg.data_dir / "seats", ec);
             !ec && it != std::filesystem::directory_iterator();
             ++it) {
            ++n;
        }
        return n;
    }

    net::io_context io;
    TempDir dir;
    std::shared_ptr<FakeAgents> seen = std::make_shared<FakeAgents>();
    HubConfig cfg;
};

TEST(Hub, CreateRefusalsNameTheirReasonAndLeaveNothingOnDisk) {
    HubRig rig;
    auto hub = rig.make();

    struct Row {
        SeatSpec spec;
        errc code;
        const char* reason;
    };

    SeatSpec rocket;
    rocket.agent = "rocket";
    SeatSpec long_name;
    long_name.name = std::string(SEAT_NAME_MAX_BYTES + 1, 'n');
    SeatSpec long_system;
    long_system.system = std::string(SEAT_SYSTEM_MAX_BYTES + 1, 's');
    SeatSpec process;
    process.agent = "process";
    const std::vector<Row> rows{
        {rocket, errc::bad_request, "field 'agent'"},
        {long_name, errc::bad_request, "field 'name' is over 200 bytes"},
        {long_system, errc::bad_request, "field 'system' is over 65536 bytes"},
        {process, errc::bad_request, "needs --agent-cmd"},
    };
    for (const auto& r : rows) {
        auto seat = hub->create(r.spec);
        ASSERT_FALSE(seat.has_value()) << r.reason;
        EXPECT_EQ(seat.error().code, make_error_code(r.code)) << r.reason;
        EXPECT_NE(seat.error().message.find(r.reason), std::string::npos) << seat.error().message;
    }
    EXPECT_EQ(rig.seat_dirs(), 0U); // validated before anything is made; a failed create undone
    EXPECT_TRUE(hub->list().empty());
}

TEST(Hub, AsyncCreateMakesTheSeatOnTheWriterAndUndoesARefusedOne) {
    HubRig rig;
    auto hub = rig.make();
    const auto caller = std::this_thread::get_id();
    std::optional<Result<std::shared_ptr<Seat>>> made;
    std::thread::id ran_on;
    SeatSpec process;
    process.agent = "process";
    hub->create(process, rig.io.get_executor(), [&](Result<std::shared_ptr<Seat>> r) {
        made.emplace(std::move(r));
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return made.has_value(); }));
    ASSERT_FALSE(made->has_value());
    EXPECT_NE(made->error().message.find("needs --agent-cmd"), std::string::npos);
    EXPECT_EQ(rig.seat_dirs(), 0U); // no seats/<id>/ debris
    made.reset();
    rig.cfg.make_agent =
        [&, inner = fake_factory(rig.seen)](
            const SeatSpec& spec, std::vector<boost::json::object> rows, net::any_io_executor ex) {
            ran_on = std::this_thread::get_id();
            return inner(spec, std::move(rows), std::move(ex));
        };
    auto hub2 = rig.make();
    hub2->create(SeatSpec{}, rig.io.get_executor(), [&](Result<std::shared_ptr<Seat>> r) {
        made.emplace(std::move(r));
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return made.has_value(); }));
    ASSERT_TRUE(made->has_value()) << made->error().message;
    EXPECT_NE(ran_on, caller); // the folder, meta.json and transcript were made off this thread
    EXPECT_TRUE(std::filesystem::exists((**made)->dir() / "meta.json"));
    EXPECT_EQ(hub2->list().size(), 1U);
}

TEST(Hub, RefusesTheSeatOverTheLimitWithTheLimit) {
    HubRig rig;
    auto hub = rig.make();
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(hub->create(SeatSpec{}).has_value());
    }
    auto over = hub->create(SeatSpec{});
    ASSERT_FALSE(over.has_value());
    EXPECT_EQ(over.error().code, make_error_code(errc::overloaded));
    EXPECT_NE(over.error().message.find("at most 3"), std::string::npos) << over.error().message;
    EXPECT_EQ(rig.seat_dirs(), 3U);
}

TEST(Hub, RestoresEverySeatAndListsTheOnesItCannotRunWithTheirReason) {
    HubRig rig;
    std::string good;
    std::string other_kind;
    {
        auto hub = rig.make();
        auto a = hub->create(SeatSpec{});
        ASSERT_TRUE(a.has_value());
        good = (*a)->id();
        auto seat = *a;
        on_strand(rig.io, *seat, [&] { (void)seat->submit("kept"); });
        ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 1; }));
        auto b = hub->create(SeatSpec{});
        ASSERT_TRUE(b.has_value());
        other_kind = (*b)->id();
        hub->shutdown();
        run_until(
            rig.io, [] { return false; }, 20ms);
    }
    // One seat becomes a kind this hub lacks; one folder gets a damaged meta.json.
    auto spec = read_meta(rig.cfg.data_dir / "seats" / other_kind);
    ASSERT_TRUE(spec.has_value());
    spec->agent = "process";
    ASSERT_TRUE(write_meta(rig.cfg.data_dir / "seats" / other_kind, *spec).has_value());
    const auto broken = rig.cfg.data_dir / "seats" / "s-broken";
    std::filesystem::create_directories(broken);
    std::ofstream(broken / "meta.json") << "{\"id\":";

    auto hub = rig.make();
    EXPECT_EQ(hub->restore(), 3U); // nothing throws, nothing is skipped
    auto g = hub->find(good);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->summary().state, SeatState::idle);
    EXPECT_EQ(g->summary().frames, 2U); // the prompt, and the close of the turn the stop cut
    auto k = hub->find(other_kind);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->summary().state, SeatState::unavailable);
    EXPECT_NE(k->summary().reason.find("needs --agent-cmd"), std::string::npos)
        << k->summary().reason;
    auto b = hub->find("s-broken");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->summary().state, SeatState::unavailable);
    EXPECT_NE(b->summary().reason.find("is damaged"), std::string::npos) << b->summary().reason;
    // Its history stays readable; prompts get the reason; its row can be removed.
    auto page = history_page(rig.io, *g, std::nullopt, 20);
    ASSERT_TRUE(page.has_value());
    EXPECT_NE(page->json().find("kept"), std::string::npos);
    auto refused = on_strand(rig.io, *k, [&] { return k->submit("hi"); });
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message.find("unavailable"), std::string::npos);
    ASSERT_TRUE(hub->remove("s-broken").has_value());
    ASSERT_TRUE(run_until(rig.io, [&] { return !std::filesystem::exists(broken); }));
    EXPECT_EQ(hub->list().size(), 2U);
}

TEST(Hub, RemoveDeletesTheSeatFolderAfterItsLastWrite) {
    HubRig rig;
    auto hub = rig.make();
    auto seat = hub->create(SeatSpec{});
    ASSERT_TRUE(seat.has_value());
    const auto dir = (*seat)->dir();
    EXPECT_TRUE(std::filesystem::exists(dir / "meta.json"));
    ASSERT_TRUE(hub->remove((*seat)->id()).has_value());
    EXPECT_EQ(hub->find((*seat)->id()), nullptr);
    ASSERT_TRUE(run_until(rig.io, [&] { return !std::filesystem::exists(dir); }));
    EXPECT_FALSE(hub->remove((*seat)->id()).has_value());
}

// Shared storage (scale-out takeover): a hub that did not make a seat opens it from the shared
// seats folder in place of its mirror, and a hub that lets a seat go leaves its folder whole
// and lists a mirror in its place.
TEST(Hub, AdoptsASeatFromTheSharedFolderInPlaceOfItsMirrorAndReleasesItWhole) {
    HubRig rig;
    rig.cfg.seats_dir = rig.dir.path() / "shared";
    auto first = rig.make(); // the node that made the seat
    auto made = first->create(SeatSpec{});
    ASSERT_TRUE(made.has_value()) << made.error().message;
    const auto id = (*made)->id();
    EXPECT_EQ((*made)->dir(), rig.cfg.seats_dir / id);
    EXPECT_EQ(first->folder_ids(), std::vector<std::string>{id});
    ASSERT_TRUE(first->release(id, std::make_unique<cluster::MirrorSource>("node-b")));
    auto placeholder = first->find(id); // listed in its place: a mirror of where it went
    ASSERT_NE(placeholder, nullptr);
    EXPECT_TRUE(placeholder->mirror());
    EXPECT_EQ(placeholder->owner(), "node-b");
    EXPECT_EQ(placeholder->summary().name, (*made)->summary().name);
    EXPECT_EQ(first->list().size(), 1U);
    EXPECT_FALSE(first->release(id, std::make_unique<cluster::MirrorSource>("node-b"))); // a mirror
    ASSERT_TRUE(run_until(rig.io, [&] { return (*made)->closed(); }));
    EXPECT_TRUE(std::filesystem::exists(rig.cfg.seats_dir / id / "meta.json")); // kept whole

    auto second = rig.make(); // the node that takes it over
    SeatSpec spec;
    spec.id = id;
    spec.name = "mirror";
    auto mirror = second->add_mirror(spec, std::make_unique<cluster::MirrorSource>("node-a"));
    auto other = second->add_mirror(
        [] {
            SeatSpec s;
            s.id = "s-000000000000";
            return s;
        }(),
        std::make_unique<cluster::MirrorSource>("node-a"));
    std::optional<Result<std::shared_ptr<Seat>>> adopted;
    auto adopt = [&](const std::string& which) {
        adopted.reset();
        second->adopt(which, rig.io.get_executor(), [&](Result<std::shared_ptr<Seat>> r) {
            adopted.emplace(std::move(r));
        });
        return run_until(rig.io, [&] { return adopted.has_value(); });
    };
    ASSERT_TRUE(adopt(id));
    ASSERT_TRUE(adopted->has_value()) << adopted->error().message;
    EXPECT_FALSE((**adopted)->mirror());
    EXPECT_EQ(second->find(id), **adopted);
    ASSERT_EQ(second->list().size(), 2U);
    EXPECT_EQ(second->list().front(), **adopted); // in the mirror's place in the listing
    EXPECT_EQ(second->list().back(), other);
    ASSERT_TRUE(run_until(rig.io, [&] { return mirror->closed(); })); // its viewers' streams end
    // Hosted already: conflict; a folder that is gone (the seat deleted): not_found.
    ASSERT_TRUE(adopt(id));
    ASSERT_FALSE(adopted->has_value());
    EXPECT_EQ(adopted->error().code, make_error_code(errc::conflict));
    ASSERT_TRUE(adopt("s-000000000000"));
    ASSERT_FALSE(adopted->has_value());
    EXPECT_EQ(adopted->error().code, make_error_code(errc::not_found));
    EXPECT_TRUE(second->find("s-000000000000")->mirror()); // left as it was
}

} // namespace
} // namespace sluice::hub
