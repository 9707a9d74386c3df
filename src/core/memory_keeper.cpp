// MemoryKeeper (core/memory_keeper.hpp).
#include <sluice/core/memory_keeper.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <pthread.h>

#include <csignal>
#include <memory>
#include <utility>

namespace sluice {

MemoryKeeper::MemoryKeeper(
    std::chrono::milliseconds interval, TrimPolicy policy, Probe probe, Trim trim)
    : interval_(interval)
    , policy_(policy)
    , probe_(std::move(probe))
    , trim_(std::move(trim))
    , baseline_(probe_().free)
    , thread_([this] {
        // SIGINT and SIGTERM go to the threads that handle them: delivered here, Asio's signal
        // handler would write its pipe from a thread the io_context never synchronizes with,
        // racing the pipe's close when the io_context goes (ThreadSanitizer saw it).
        sigset_t stop_signals;
        sigemptyset(&stop_signals);
        sigaddset(&stop_signals, SIGINT);
        sigaddset(&stop_signals, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
        run();
    }) {
}

MemoryKeeper::~MemoryKeeper() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

std::unique_ptr<MemoryKeeper> MemoryKeeper::glibc(std::chrono::milliseconds interval) {
    return std::make_unique<MemoryKeeper>(
        interval,
        TrimPolicy{},
        []() -> HeapUse {
#if defined(__GLIBC__)
            const auto mi = ::mallinfo2();
            return HeapUse{.in_use = mi.uordblks, .free = mi.fordblks};
#else
            return HeapUse{};
#endif
        },
        [] {
#if defined(__GLIBC__)
            (void)::malloc_trim(0);
#endif
        });
}

std::size_t MemoryKeeper::trims() const {
    std::lock_guard lock(mu_);
    return trims_;
}

void MemoryKeeper::run() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
        lock.unlock();
        const HeapUse now = probe_();
        bool trimmed = false;
        if (policy_.due(now, baseline_)) {
            trim_();
            baseline_ = probe_().free; // the free chunks stay; their pages are gone
            trimmed = true;
        } else if (now.free < baseline_) {
            baseline_ = now.free; // reused: growth from here is new
        }
        lock.lock();
        trims_ += trimmed ? 1 : 0;
    }
}

} // namespace sluice
