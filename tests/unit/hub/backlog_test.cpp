// Unit tests of hub/backlog.hpp: tasks run off the calling thread in order, at the given nice
// value; bounded unless told otherwise; a task's exception does not stop the next; stop drops
// what waits.
#include <sluice/hub/backlog.hpp>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace sluice::hub {
namespace {

TEST(Backlog, RunsTasksInOrderOffTheCallingThreadAtItsNiceValue) {
    Backlog b("test", 100, 7);
    std::vector<int> ran; // touched by the backlog's thread only until wait_idle returns
    std::atomic<bool> off_thread{true};
    std::atomic<int> nice{-100};
    const auto me = std::this_thread::get_id();
    for (int i = 0; i < 50; ++i) {
        ASSERT_EQ(
            b.add([&, i] {
                off_thread = off_thread && std::this_thread::get_id() != me;
                nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
                ran.push_back(i);
            }),
            Backlog::Added::queued);
    }
    b.wait_idle();
    ASSERT_EQ(ran.size(), 50U);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(ran[static_cast<std::size_t>(i)], i);
    }
    EXPECT_TRUE(off_thread);
    EXPECT_EQ(nice, 7);
}

TEST(Backlog, RefusesBeyondItsBoundUnlessToldTheTaskMustNotBeDropped) {
    Backlog b("test", 2, 0);
    std::promise<void> release;
    auto gate = release.get_future().share();
    std::promise<void> started;
    ASSERT_EQ(
        b.add([&] {
            started.set_value();
            gate.wait();
        }),
        Backlog::Added::queued);
    started.get_future().wait(); // the first runs: the queue is empty again
    std::atomic<int> ran{0};
    EXPECT_EQ(b.add([&] { ++ran; }), Backlog::Added::queued);
    EXPECT_EQ(b.add([&] { ++ran; }), Backlog::Added::queued);
    EXPECT_EQ(b.add([&] { ++ran; }), Backlog::Added::full);
    EXPECT_EQ(b.add([&] { ++ran; }, false), Backlog::Added::queued);
    release.set_value();
    b.wait_idle();
    EXPECT_EQ(ran, 3);
}

TEST(Backlog, ATaskThatThrowsDoesNotStopTheNext) {
    Backlog b("test", 10, 0);
    std::atomic<bool> second{false};
    ASSERT_EQ(b.add([] { throw std::runtime_error("a bad file"); }), Backlog::Added::queued);
    ASSERT_EQ(b.add([&] { second = true; }), Backlog::Added::queued);
    b.wait_idle();
    EXPECT_TRUE(second);
}

TEST(Backlog, StopDropsWhatWaitsAndRefusesMore) {
    Backlog b("test", 10, 0);
    std::promise<void> release;
    auto gate = release.get_future().share();
    std::promise<void> started;
    std::atomic<bool> saw_stopping{false};
    ASSERT_EQ(
        b.add([&] {
            started.set_value();
            gate.wait();
            saw_stopping = b.stopping();
        }),
        Backlog::Added::queued);
    started.get_future().wait();
    std::atomic<int> ran{0};
    ASSERT_EQ(b.add([&] { ++ran; }), Backlog::Added::queued);
    std::thread stopper([&] { b.stop(); });
    while (!b.stopping()) {
        std::this_thread::yield();
    }
    release.set_value();
    stopper.join();
    EXPECT_TRUE(saw_stopping); // a long task sees it between its chunks
    EXPECT_EQ(ran, 0);
    EXPECT_EQ(b.add([&] { ++ran; }), Backlog::Added::stopped);
    b.stop(); // idempotent
    EXPECT_EQ(ran, 0);
}

} // namespace
} // namespace sluice::hub
