// UTF-8 repair for process output handed to the model and to callers.
#include "text_util.hpp"

#include <cstdint>

namespace sluice::runtime::detail {

namespace {

constexpr std::string_view REPLACEMENT = "\xEF\xBF\xBD";

// Length of the valid sequence at s[i]: >0 valid, 0 invalid, -1 incomplete (needs more bytes).
int sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    if (b0 < 0x80) {
        return 1;
    }
    int len = 0;
    std::uint8_t lo = 0x80;
    std::uint8_t hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        lo = b0 == 0xE0 ? 0xA0 : 0x80;
        hi = b0 == 0xED ? 0x9F : 0xBF;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        lo = b0 == 0xF0 ? 0x90 : 0x80;
        hi = b0 == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    for (int k = 1; k < len; ++k) {
        const std::size_t j = i + static_cast<std::size_t>(k);
        if (j >= s.size()) {
            return -1;
        }
        const auto b = static_cast<std::uint8_t>(s[j]);
        const std::uint8_t l = k == 1 ? lo : 0x80;
        const std::uint8_t h = k == 1 ? hi : 0xBF;
        if (b < l || b > h) {
            return 0;
        }
    }
    return len;
}

// Appends the valid form of s to out; returns how many trailing bytes are an incomplete
// sequence (not appended) when `hold_tail`, else repairs them too.
std::size_t append_valid(std::string_view s, std::string& out, bool hold_tail) {
    std::size_t i = 0;
    while (i < s.size()) {
        // Fast path over ASCII.
        std::size_t j = i;
        while (j < s.size() && static_cast<std::uint8_t>(s[j]) < 0x80) {
            ++j;
        }
        out.append(s.substr(i, j - i));
        i = j;
        if (i >= s.size()) {
            break;
        }
        const int len = sequence_length(s, i);
        if (len > 0) {
            out.append(s.substr(i, static_cast<std::size_t>(len)));
            i += static_cast<std::size_t>(len);
        } else if (len < 0 && hold_tail) {
            return s.size() - i;
        } else {
            out.append(REPLACEMENT);
            ++i;
        }
    }
    return 0;
}

} // namespace

void Utf8Repair::feed(std::string_view chunk, std::string& out) {
    if (carry_.empty()) {
        const std::size_t held = append_valid(chunk, out, true);
        carry_.assign(chunk.substr(chunk.size() - held));
        return;
    }
    // At most 3 bytes are held back, so joining costs one copy of the chunk.
    std::string joined = std::move(carry_);
    carry_.clear();
    joined.append(chunk);
    const std::size_t held = append_valid(joined, out, true);
    carry_.assign(std::string_view(joined).substr(joined.size() - held));
}

void Utf8Repair::finish(std::string& out) {
    if (!carry_.empty()) {
        append_valid(carry_, out, false);
        carry_.clear();
    }
}

std::string repair_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    append_valid(s, out, false);
    return out;
}

} // namespace sluice::runtime::detail
