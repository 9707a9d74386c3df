// Assertions: SLUICE_ASSERT (debug only) for bugs, SLUICE_INVARIANT (always on) for broken
// promises.
#pragma once

namespace sluice::detail {

/// Reports a failed assertion and aborts. Never returns.
[[noreturn]] void assertion_failed(const char* expr, const char* why, const char* file, int line);

} // namespace sluice::detail

/// Checks a condition that only a bug can break; compiled out in release builds.
#ifdef NDEBUG
#define SLUICE_ASSERT(expr) static_cast<void>(0)
#else
#define SLUICE_ASSERT(expr)                                                                        \
    ((expr) ? static_cast<void>(0)                                                                 \
            : ::sluice::detail::assertion_failed(#expr, "", __FILE__, __LINE__))
#endif

/// Checks a condition the program cannot continue without, in every build.
#define SLUICE_INVARIANT(expr, why)                                                                \
    ((expr) ? static_cast<void>(0)                                                                 \
            : ::sluice::detail::assertion_failed(#expr, why, __FILE__, __LINE__))
