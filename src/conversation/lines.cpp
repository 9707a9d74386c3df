// Private line readers over a file descriptor, and the frame sniff of the counting scan.
#include "lines.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/row_scan.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice::detail {

namespace {
constexpr std::uint64_t BLOCK = 1U << 20; // 1 MiB reads: large enough to run at memory speed
}

void Buffer::reshape(std::size_t from, std::size_t keep, std::size_t at, std::size_t size) {
    if (size > cap_) {
        // No zero fill: every byte is read into; the padding past the end is zeroed once.
        std::unique_ptr<char[]> grown(new char[size + ROW_SCAN_PADDING]);
        std::memset(grown.get() + size, 0, ROW_SCAN_PADDING);
        if (keep > 0) {
            std::memcpy(grown.get() + at, data_.get() + from, keep);
        }
        data_ = std::move(grown);
        cap_ = size;
    } else if (keep > 0 && from != at) {
        std::memmove(data_.get() + at, data_.get() + from, keep);
    }
    size_ = size;
}

ForwardLines::ForwardLines(int fd, std::uint64_t begin, std::uint64_t end)
    : fd_(fd)
    , pos_(begin)
    , end_(end)
    , buf_lo_(begin) {
}

std::optional<Line> ForwardLines::next() {
    if (pos_ >= end_ || failed_) {
        return std::nullopt;
    }
    for (;;) {
        const std::uint64_t have_hi = buf_lo_ + buf_.size();
        const char* start = buf_.data() + (pos_ - buf_lo_);
        const auto avail = static_cast<std::size_t>(have_hi - pos_);
        if (avail > 0) {
            if (const void* nl = std::memchr(start, '\n', avail)) {
                const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
                Line l{{start, len}, pos_};
                pos_ += len + 1;
                return l;
            }
        }
        if (have_hi >= end_) {
            // the last line has no newline: return it whole
            Line l{{start, avail}, pos_};
            pos_ = end_;
            return avail > 0 ? std::optional<Line>(l) : std::nullopt;
        }
        // Keep the partial line, read the next block after it.
        const std::uint64_t want = std::min<std::uint64_t>(std::max(BLOCK, avail), end_ - have_hi);
        buf_.reshape(
            static_cast<std::size_t>(pos_ - buf_lo_),
            avail,
            0,
            static_cast<std::size_t>(avail + want));
        if (!pread_all(fd_, buf_.data() + avail, want, have_hi)) {
            failed_ = true;
            return std::nullopt;
        }
        buf_lo_ = pos_;
    }
}

BackwardLines::BackwardLines(int fd, std::uint64_t end, bool open_tail)
    : fd_(fd)
    , pos_(open_tail ? end + 1 : end) // as if the newline were there
    , buf_lo_(end) {
}

std::optional<Line> BackwardLines::prev() {
    if (failed_) {
        return std::nullopt;
    }
    // The line ends at pos_ - 1 (a newline) unless pos_ is the start.
    if (pos_ == 0) {
        return std::nullopt;
    }
    const std::uint64_t line_end = pos_ - 1; // offset of the newline ending this line
    for (;;) {
        // search [buf_lo_, line_end) backward for the previous newline
        if (line_end > buf_lo_) {
            const char* base = buf_.data();
            const auto n = static_cast<std::size_t>(line_end - buf_lo_);
            const void* nl = ::memrchr(base, '\n', n);
            if (nl != nullptr || buf_lo_ == 0) {
                const std::uint64_t start =
                    nl != nullptr
                        ? buf_lo_ + static_cast<std::uint64_t>(static_cast<const char*>(nl) - base)
                              + 1
                        : 0;
                Line l{
                    {base + (start - buf_lo_), static_cast<std::size_t>(line_end - start)}, start};
                pos_ = start;
                return l;
            }
        } else if (buf_lo_ == 0) {
            Line l{{}, 0};
            pos_ = 0;
            return l;
        }
        // Read more before buf_lo_: at least a block, doubling for long lines.
        const std::uint64_t keep_n = line_end - std::min(line_end, buf_lo_);
        const std::uint64_t want = std::min<std::uint64_t>(std::max(BLOCK, keep_n), buf_lo_);
        buf_.reshape(
            0,
            static_cast<std::size_t>(keep_n),
            static_cast<std::size_t>(want),
            static_cast<std::size_t>(want + keep_n));
        if (!pread_all(fd_, buf_.data(), want, buf_lo_ - want)) {
            failed_ = true;
            return std::nullopt;
        }
        buf_lo_ -= want;
    }
}

namespace {

// Skips whitespace; returns the new index.
std::size_t skip_ws(std::string_view s, std::size_t i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) {
        ++i;
    }
    return i;
}

// Skips a string starting at s[i] == '"'; returns the index after its closing quote.
std::size_t skip_string(std::string_view s, std::size_t i) {
    for (++i; i < s.size(); ++i) {
        if (s[i] == '\\') {
            ++i;
        } else if (s[i] == '"') {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

// Skips one JSON value starting at s[i]; returns the index after it.
std::size_t skip_value(std::string_view s, std::size_t i) {
    if (i >= s.size()) {
        return std::string_view::npos;
    }
    if (s[i] == '"') {
        return skip_string(s, i);
    }
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < s.size()) {
            const char c = s[i];
            if (c == '"') {
                i = skip_string(s, i);
                if (i == std::string_view::npos) {
                    return i;
                }
                continue;
            }
            if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    return i + 1;
                }
            }
            ++i;
        }
        return std::string_view::npos;
    }
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') {
        ++i;
    }
    return i;
}

} // namespace

bool sniff_is_frame(std::string_view s) noexcept {
    std::size_t i = skip_ws(s, 0);
    if (i >= s.size() || s[i] != '{') {
        return false;
    }
    i = skip_ws(s, i + 1);
    while (i < s.size() && s[i] == '"') {
        const std::size_t key_end = skip_string(s, i);
        if (key_end == std::string_view::npos) {
            return false;
        }
        const std::string_view key = s.substr(i + 1, key_end - i - 2);
        i = skip_ws(s, key_end);
        if (i >= s.size() || s[i] != ':') {
            return false;
        }
        i = skip_ws(s, i + 1);
        if (key == "type") {
            if (i >= s.size() || s[i] != '"') {
                return false;
            }
            const std::size_t v_end = skip_string(s, i);
            if (v_end == std::string_view::npos) {
                return false;
            }
            return is_frame_type(s.substr(i + 1, v_end - i - 2));
        }
        i = skip_value(s, i);
        if (i == std::string_view::npos) {
            return false;
        }
        i = skip_ws(s, i);
        if (i < s.size() && s[i] == ',') {
            i = skip_ws(s, i + 1);
        } else {
            return false;
        }
    }
    return false;
}

namespace {

// A basic_parser handler that keeps nothing: the parser only validates. Its member names and
// signatures are the ones Boost.JSON's basic_parser calls.
// NOLINTBEGIN(readability-identifier-naming)
// NOLINTBEGIN(readability-convert-member-functions-to-static)
// NOLINTBEGIN(readability-named-parameter)
struct NullHandler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    using ec_t = boost::system::error_code;

    bool on_document_begin(ec_t&) { return true; }

    bool on_document_end(ec_t&) { return true; }

    bool on_object_begin(ec_t&) { return true; }

    bool on_object_end(std::size_t, ec_t&) { return true; }

    bool on_array_begin(ec_t&) { return true; }

    bool on_array_end(std::size_t, ec_t&) { return true; }

    bool on_key_part(std::string_view, std::size_t, ec_t&) { return true; }

    bool on_key(std::string_view, std::size_t, ec_t&) { return true; }

    bool on_string_part(std::string_view, std::size_t, ec_t&) { return true; }

    bool on_string(std::string_view, std::size_t, ec_t&) { return true; }

    bool on_number_part(std::string_view, ec_t&) { return true; }

    bool on_int64(std::int64_t, std::string_view, ec_t&) { return true; }

    bool on_uint64(std::uint64_t, std::string_view, ec_t&) { return true; }

    bool on_double(double, std::string_view, ec_t&) { return true; }

    bool on_bool(bool, ec_t&) { return true; }

    bool on_null(ec_t&) { return true; }

    bool on_comment_part(std::string_view, ec_t&) { return true; }

    bool on_comment(std::string_view, ec_t&) { return true; }
};

// NOLINTEND(readability-named-parameter)
// NOLINTEND(readability-convert-member-functions-to-static)
// NOLINTEND(readability-identifier-naming)

} // namespace

bool valid_json(std::string_view line) noexcept {
    boost::json::basic_parser<NullHandler> p{boost::json::parse_options{}};
    boost::system::error_code ec;
    const std::size_t n = p.write_some(false, line.data(), line.size(), ec);
    if (ec || !p.done()) {
        return false;
    }
    // Only whitespace may follow the text.
    for (std::size_t i = n; i < line.size(); ++i) {
        const char c = line[i];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            return false;
        }
    }
    return true;
}

} // namespace sluice::detail
