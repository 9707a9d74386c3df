// UTF-8 boundary helpers.
#include <sluice/core/utf8.hpp>

#include <algorithm>

namespace sluice::utf8 {

namespace {
// A UTF-8 character is at most 4 bytes, so a boundary is never more than 3 bytes away.
constexpr std::size_t MAX_CONTINUATION = 3;
} // namespace

std::size_t ceil_boundary(std::string_view s, std::size_t pos) noexcept {
    pos = std::min(pos, s.size());
    const std::size_t limit = std::min(s.size(), pos + MAX_CONTINUATION);
    std::size_t p = pos;
    while (p < limit && is_continuation(s[p])) {
        ++p;
    }
    return p;
}

std::size_t floor_boundary(std::string_view s, std::size_t pos) noexcept {
    pos = std::min(pos, s.size());
    if (pos == s.size()) {
        return pos;
    }
    for (std::size_t back = 0; back <= MAX_CONTINUATION && back <= pos; ++back) {
        if (!is_continuation(s[pos - back])) {
            return pos - back;
        }
    }
    return pos;
}

} // namespace sluice::utf8
