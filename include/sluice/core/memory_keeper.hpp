// MemoryKeeper: hands the allocator's free pages back to the system when they pile up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace sluice {

/// What the allocator holds: bytes in use and free bytes it keeps (glibc's mallinfo2
/// `uordblks` and `fordblks`).
struct HeapUse {
    std::size_t in_use{}; ///< bytes handed out and not freed
    std::size_t free{};   ///< bytes freed into the allocator's arenas, not given back to the system
};

/// When to trim: what was given back last is the baseline (free chunks stay free after a trim;
/// only their pages go), and a trim is due once the free bytes grew past it by `min_bytes` and
/// by `in_use / ratio` (so what is kept free stays a small part of what is used).
struct TrimPolicy {
    std::size_t min_bytes{256U << 10}; ///< growth of free bytes below which no trim is worth it
    std::size_t ratio{16};             ///< ... and at least in_use / ratio of it

    /// Whether a trim is due now, given the free bytes right after the last trim (`baseline`).
    [[nodiscard]] bool due(const HeapUse& now, std::size_t baseline) const noexcept {
        if (now.free <= baseline) {
            return false;
        }
        const std::size_t grown = now.free - baseline;
        return grown >= min_bytes && grown >= now.in_use / (ratio == 0 ? 1 : ratio);
    }
};

/// A thread that looks at the heap every `interval` and, when `TrimPolicy::due`, trims it
/// (glibc's malloc_trim(0): free pages inside the arenas are handed back with madvise, the tops
/// shrunk). Why: a window's frames are cut from its front as new ones come, the pages a page
/// build or a burst used are freed, and glibc keeps all of it resident; without this a hub's
/// memory is its peak, not what its windows hold (bench/RESULTS.md, issue 31).
///
/// The probe and the trim are parameters so the schedule is testable; `MemoryKeeper::glibc()`
/// gives the real ones. Under ASan or TSan the allocator is the sanitizer's: glibc's arenas hold
/// next to nothing, so nothing is due and nothing is trimmed there.
///
/// @par Thread safety
/// Construction starts the thread; the destructor stops and joins it. `trims()` from any thread.
class MemoryKeeper {
public:
    using Probe = std::function<HeapUse()>;
    using Trim = std::function<void()>;

    MemoryKeeper(std::chrono::milliseconds interval, TrimPolicy policy, Probe probe, Trim trim);
    ~MemoryKeeper();
    MemoryKeeper(const MemoryKeeper&) = delete;
    MemoryKeeper& operator=(const MemoryKeeper&) = delete;

    /// A keeper of this process's glibc heap, looking every `interval`.
    static std::unique_ptr<MemoryKeeper> glibc(std::chrono::milliseconds interval);

    /// How many trims ran.
    [[nodiscard]] std::size_t trims() const;

private:
    void run();

    std::chrono::milliseconds interval_;
    TrimPolicy policy_;
    Probe probe_;
    Trim trim_;
    std::size_t baseline_; // free bytes right after the last trim (at first: at construction)
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_{false};
    std::size_t trims_{0};
    std::thread thread_; // last: starts once the rest is made
};

} // namespace sluice
