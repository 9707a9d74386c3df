// Tests of CancellationToken.
#include <sluice/core/cancel.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

TEST(CancellationToken, CopiesShareOneFlag) {
    sluice::CancellationToken a;
    auto b = a;
    EXPECT_FALSE(b.is_cancelled());
    a.cancel();
    EXPECT_TRUE(b.is_cancelled());
    a.cancel(); // idempotent
    EXPECT_TRUE(a.is_cancelled());
}

TEST(CancellationToken, RunsCallbacksOnceOnCancel) {
    sluice::CancellationToken t;
    int calls = 0;
    auto reg = t.on_cancel([&] { ++calls; });
    t.cancel();
    t.cancel();
    EXPECT_EQ(calls, 1);
}

TEST(CancellationToken, RunsCallbackAtOnceWhenAlreadyCancelled) {
    sluice::CancellationToken t;
    t.cancel();
    bool ran = false;
    auto reg = t.on_cancel([&] { ran = true; });
    EXPECT_TRUE(ran);
}

TEST(CancellationToken, DroppedRegistrationIsNotCalled) {
    sluice::CancellationToken t;
    bool ran = false;
    {
        auto reg = t.on_cancel([&] { ran = true; });
    }
    t.cancel();
    EXPECT_FALSE(ran);
}

TEST(CancellationToken, CancelsFromAnotherThread) {
    sluice::CancellationToken t;
    std::atomic<bool> ran{false};
    auto reg = t.on_cancel([&] { ran = true; });
    std::thread th([t]() mutable { t.cancel(); });
    th.join();
    EXPECT_TRUE(ran.load());
    EXPECT_TRUE(t.is_cancelled());
}

} // namespace

TEST(CancellationToken, KeepsTheFirstReasonGivenAndSharesItWithCopies) {
    sluice::CancellationToken a;
    const sluice::CancellationToken b = a;
    EXPECT_STREQ(b.reason(), "");
    a.cancel("cancelled by the user");
    a.cancel("interrupted by a hub restart");
    EXPECT_TRUE(b.is_cancelled());
    EXPECT_STREQ(b.reason(), "cancelled by the user");
}

TEST(CancellationToken, AReasonGivenAfterAPlainCancelIsStillRecorded) {
    sluice::CancellationToken a;
    a.cancel();
    EXPECT_STREQ(a.reason(), "");
    a.cancel("the caller disconnected");
    EXPECT_STREQ(a.reason(), "the caller disconnected");
}
