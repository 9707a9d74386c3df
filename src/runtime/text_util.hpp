// Text helpers private to runtime: UTF-8 repair of process output, capped appends.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::runtime::detail {

/// Repairs a stream of bytes into valid UTF-8: invalid bytes become U+FFFD; an incomplete
/// sequence at the end of a chunk is held back (at most 3 bytes) until the next chunk.
///
/// @par Thread safety
/// None.
class Utf8Repair {
public:
    /// Appends the valid UTF-8 form of `chunk` (after what was held back) to `out`.
    void feed(std::string_view chunk, std::string& out);
    /// Appends what is held back (as U+FFFD) to `out`; call at the end of the stream.
    void finish(std::string& out);

private:
    std::string carry_;
};

/// The valid UTF-8 form of `s` (invalid bytes become U+FFFD).
[[nodiscard]] std::string repair_utf8(std::string_view s);

} // namespace sluice::runtime::detail
