// Test helper: the bytes the heap holds now, to measure what a structure costs.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers' runtime (g++ ships no header for it): bytes their allocator holds now.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

namespace sluice::test {

/// Bytes handed out and not freed: the sanitizer's allocator's count under ASan/TSan (what was
/// asked for, or its size classes), glibc's `uordblks` otherwise.
inline std::size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return __sanitizer_get_current_allocated_bytes();
#else
    return mallinfo2().uordblks;
#endif
}

} // namespace sluice::test
