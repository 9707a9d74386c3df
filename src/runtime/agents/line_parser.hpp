// LineParser: one stdout line of an agent parsed as JSON while its pieces arrive.
#pragma once

#include <boost/json/stream_parser.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

namespace sluice::runtime::detail {

/// A stdout line parsed as its pieces arrive, never assembled: an agent's 12 MB row costs its
/// parse (the parser's string buffer, then the value) and not a copy of the line as well
/// (issue 11: the hub's peak while it takes an oversize frame). A line that is not JSON (a
/// stray log line) is only counted from its first bad byte on.
///
/// @par Thread safety
/// None: one per stdout reader.
class LineParser {
public:
    /// Takes the next piece of the line (without its '\n').
    void feed(std::string_view piece) {
        bytes_ += piece.size();
        if (bad_ || piece.empty()) {
            return;
        }
        boost::system::error_code ec;
        parser_->write(piece.data(), piece.size(), ec);
        bad_ = static_cast<bool>(ec); // not JSON (a stray log line): the rest is only counted
    }

    /// The bytes of the line so far.
    [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

    /// The whole line's value (null: empty or not JSON); the parser is ready for the next line.
    boost::json::value take() {
        boost::json::value v;
        if (!bad_ && bytes_ > 0) {
            boost::system::error_code ec;
            parser_->finish(ec);
            if (!ec) {
                v = parser_->release();
            }
        }
        clear();
        return v;
    }

    /// Drops the line; a parser that grew for a large line is let go with it.
    void clear() {
        if (bytes_ > LARGE_LINE_BYTES) {
            parser_.emplace();
        } else {
            parser_->reset();
        }
        bytes_ = 0;
        bad_ = false;
    }

private:
    // Past this a line's parser is rebuilt, not reset: its buffers keep their size otherwise.
    static constexpr std::size_t LARGE_LINE_BYTES = 256 * 1024;

    std::optional<boost::json::stream_parser> parser_{std::in_place};
    std::size_t bytes_{0};
    bool bad_{false};
};

} // namespace sluice::runtime::detail
