// Tests of MemoryKeeper: when the heap's free pages are handed back (issue 31's window memory).
#include <sluice/core/memory_keeper.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace {

using namespace std::chrono_literals;
using sluice::HeapUse;
using sluice::MemoryKeeper;
using sluice::TrimPolicy;

constexpr std::size_t MIB = 1U << 20;

TEST(TrimPolicy, ATrimIsDueOnceFreeBytesGrewPastBothBounds) {
    const TrimPolicy p{.min_bytes = MIB, .ratio = 8};
    // Grown 4 MiB over the baseline, in_use / 8 = 2 MiB: due.
    EXPECT_TRUE(p.due({.in_use = 16 * MIB, .free = 5 * MIB}, MIB));
    // Grown 4 MiB but in_use / 8 = 8 MiB: kept (a small part of what is used).
    EXPECT_FALSE(p.due({.in_use = 64 * MIB, .free = 5 * MIB}, MIB));
    // Grown under min_bytes: not worth a trim however small the heap.
    EXPECT_FALSE(p.due({.in_use = MIB, .free = MIB + MIB / 2}, MIB));
    // At or under the baseline (what the last trim left free): nothing new to give back.
    EXPECT_FALSE(p.due({.in_use = MIB, .free = 40 * MIB}, 40 * MIB));
    EXPECT_FALSE(p.due({.in_use = MIB, .free = 2 * MIB}, 40 * MIB));
}

// A heap whose free bytes the test sets; a trim leaves them (glibc's free chunks stay free, only
// their pages go), so the keeper must measure growth from what the last trim left.
struct FakeHeap {
    std::mutex mu;
    HeapUse use{.in_use = 16 * MIB, .free = MIB};
    std::atomic<int> trims{0};

    void set_free(std::size_t f) {
        std::lock_guard lock(mu);
        use.free = f;
    }

    std::unique_ptr<MemoryKeeper> keeper() {
        return std::make_unique<MemoryKeeper>(
            5ms,
            TrimPolicy{.min_bytes = MIB, .ratio = 8},
            [this] {
                std::lock_guard lock(mu);
                return use;
            },
            [this] { ++trims; });
    }
};

bool wait_for_trims(const FakeHeap& heap, int n) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (heap.trims.load() < n && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(2ms);
    }
    return heap.trims.load() >= n;
}

TEST(MemoryKeeper, TrimsWhenFreeBytesPileUpAndNotAgainForTheSameBytes) {
    FakeHeap heap;
    auto keeper = heap.keeper();
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(heap.trims.load(), 0) << "1 MiB free at start is the baseline";
    heap.set_free(6 * MIB); // a window's cut front, 5 MiB
    ASSERT_TRUE(wait_for_trims(heap, 1));
    std::this_thread::sleep_for(100ms); // twenty looks at the same free bytes
    EXPECT_EQ(heap.trims.load(), 1) << "the bytes a trim left free are not trimmed again";
    EXPECT_EQ(keeper->trims(), 1U);
    heap.set_free(2 * MIB); // reused by new frames: the baseline follows down
    std::this_thread::sleep_for(50ms);
    heap.set_free(5 * MIB); // 3 MiB freed again since
    ASSERT_TRUE(wait_for_trims(heap, 2));
}

TEST(MemoryKeeper, KeepsFreeBytesThatAreASmallPartOfTheHeap) {
    FakeHeap heap;
    {
        std::lock_guard lock(heap.mu);
        heap.use.in_use = 400 * MIB;
    }
    auto keeper = heap.keeper();
    heap.set_free(20 * MIB); // 19 MiB grown, under in_use / 8 = 50 MiB
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(heap.trims.load(), 0);
    heap.set_free(60 * MIB);
    EXPECT_TRUE(wait_for_trims(heap, 1));
}

TEST(MemoryKeeper, StopsAtOnceWhateverItsInterval) {
    int trims = 0;
    const auto start = std::chrono::steady_clock::now();
    {
        MemoryKeeper k(
            1h, TrimPolicy{}, [] { return HeapUse{}; }, [&] { ++trims; });
    }
    // Destruction wakes the wait: well under the hour (bounded by the test's own timeout too).
    EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
    EXPECT_EQ(trims, 0);
}

} // namespace
