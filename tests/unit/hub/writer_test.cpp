// Unit tests of hub/writer.hpp: jobs off the calling thread, in order, completions on the executor,
// bounded (a full writer refuses).
#include "unit/hub/hub_test_support.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/hub/writer.hpp>

#include <gtest/gtest.h>

#include <future>
#include <numeric>
#include <thread>

namespace sluice::hub {
namespace {

TEST(Writer, RunsJobsInOrderOffTheCallingThreadAndCompletesOnTheExecutor) {
    net::io_context io;
    auto strand = net::make_strand(io);
    Writer writer;
    std::vector<int> ran;
    std::vector<int> done;
    const auto me = std::this_thread::get_id();
    bool all_off_thread = true;
    bool all_on_strand = true;
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(writer.submit(
            [&, i] {
                all_off_thread = all_off_thread && std::this_thread::get_id() != me;
                ran.push_back(i);
                return boost::system::error_code{};
            },
            strand,
            [&, i](boost::system::error_code ec) {
                EXPECT_FALSE(ec);
                all_on_strand = all_on_strand && strand.running_in_this_thread();
                done.push_back(i);
            }));
    }
    ASSERT_TRUE(test::run_until(io, [&] { return done.size() == 20; }));
    std::vector<int> want(20);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(ran, want);
    EXPECT_EQ(done, want);
    EXPECT_TRUE(all_off_thread);
    EXPECT_TRUE(all_on_strand);
}

TEST(Writer, HandsTheJobsErrorToItsCompletion) {
    net::io_context io;
    Writer writer;
    boost::system::error_code got;
    bool done = false;
    ASSERT_TRUE(writer.submit(
        [] { return boost::system::error_code(ENOSPC, boost::system::system_category()); },
        io.get_executor(),
        [&](boost::system::error_code ec) {
            got = ec;
            done = true;
        }));
    ASSERT_TRUE(test::run_until(io, [&] { return done; }));
    EXPECT_EQ(got.value(), ENOSPC);
}

TEST(Writer, RefusesWhenFullAndAcceptsAgainOnceDrained) {
    net::io_context io;
    Writer writer(2);
    std::promise<void> release;
    auto gate = release.get_future().share();
    const auto blocked = [gate] {
        gate.wait();
        return boost::system::error_code{};
    };
    ASSERT_TRUE(writer.submit(blocked, io.get_executor(), nullptr));
    ASSERT_TRUE(writer.submit(blocked, io.get_executor(), nullptr));
    EXPECT_EQ(writer.pending(), 2U);
    bool called = false;
    EXPECT_FALSE(writer.submit(
        blocked, io.get_executor(), [&](boost::system::error_code) { called = true; }));
    release.set_value();
    writer.drain();
    EXPECT_EQ(writer.pending(), 0U);
    EXPECT_TRUE(
        writer.submit([] { return boost::system::error_code{}; }, io.get_executor(), nullptr));
    writer.drain();
    io.poll();
    EXPECT_FALSE(called); // a refused job's completion never runs
}

} // namespace
} // namespace sluice::hub
