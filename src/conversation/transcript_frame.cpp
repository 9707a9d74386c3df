// Transcript: one whole frame by position (for an oversize frame's full form), and byte ranges.
#include "lines.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <algorithm>

namespace sluice {

using boost::system::result;

result<std::pair<std::uint64_t, std::uint64_t>> Transcript::frame_span(std::uint64_t pos) {
    if (pos >= frames_ || pos < origin_) {
        return make_error_code(errc::not_found);
    }
    if (!counted_) {
        return frame_span_back(pos);
    }
    // The nearest checkpoint at or before `pos` (else the file's start).
    auto it = std::upper_bound(
        checkpoints_.begin(), checkpoints_.end(), pos, [](std::uint64_t p, const Checkpoint& c) {
            return p < c.pos;
        });
    std::uint64_t at = origin_; // the file's first frame
    std::uint64_t offset = 0;
    if (it != checkpoints_.begin()) {
        --it;
        at = it->pos;
        offset = it->offset;
    }
    detail::ForwardLines r(fd_, offset, end_);
    while (auto l = r.next()) {
        if (!detail::sniff_is_frame(l->text)) {
            continue;
        }
        if (at == pos) {
            return std::pair<std::uint64_t, std::uint64_t>{l->offset, l->text.size()};
        }
        ++at;
    }
    return make_error_code(r.failed() ? errc::io_error : errc::not_found);
}

result<std::string> Transcript::read_bytes(std::uint64_t offset, std::uint64_t n) const {
    std::string out(n, '\0');
    if (!pread_all(fd_, out.data(), n, offset)) {
        return make_error_code(errc::io_error);
    }
    return out;
}

} // namespace sluice
