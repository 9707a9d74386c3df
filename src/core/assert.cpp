// Where failed SLUICE_ASSERT / SLUICE_INVARIANT checks end up.
#include <sluice/core/assert.hpp>

#include <cstdio>
#include <cstdlib>

namespace sluice::detail {

void assertion_failed(const char* expr, const char* why, const char* file, int line) {
    std::fprintf(stderr, "sluice: invariant broken: %s (%s) at %s:%d\n", expr, why, file, line);
    std::abort();
}

} // namespace sluice::detail
