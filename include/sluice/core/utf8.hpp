// UTF-8 boundary helpers used when the relay trims or splits preview text.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice::utf8 {

/// Whether `c` is a UTF-8 continuation byte (10xxxxxx).
[[nodiscard]] constexpr bool is_continuation(char c) noexcept {
    return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U;
}

/// The smallest character boundary at or after `pos` (at most 3 bytes further, so invalid
/// input cannot make a cut run away), clamped to `s.size()`.
[[nodiscard]] std::size_t ceil_boundary(std::string_view s, std::size_t pos) noexcept;

/// The largest character boundary at or before `pos` (at most 3 bytes back; if none is found
/// there the input is not UTF-8 and `pos` itself is returned), clamped to `s.size()`.
[[nodiscard]] std::size_t floor_boundary(std::string_view s, std::size_t pos) noexcept;

} // namespace sluice::utf8
