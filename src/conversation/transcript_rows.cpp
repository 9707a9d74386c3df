// A transcript's lines read as held frames; bad lines skipped and reported, or failed on (strict).
#include "transcript_rows.hpp"

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/error.hpp>

#include <boost/json/parse.hpp>

#include <spdlog/spdlog.h>

#include <utility>

namespace sluice::detail {

using boost::system::result;

void RowReader::note(BadLine bad, bool counted) {
    for (const auto& b : bad_lines_) {
        if (b.line == bad.line) {
            return; // read again (a window, then a page)
        }
    }
    ++total_;
    if (bad_lines_.size() < TRANSCRIPT_BAD_LINES_KEPT) {
        if (counted) {
            spdlog::warn("transcript {}:{}: skipped: {}", path_.string(), bad.line, bad.what);
        } else { // numbered from the end: its line number is known once the file is counted
            spdlog::warn("transcript {}: a line skipped: {}", path_.string(), bad.what);
        }
        bad_lines_.push_back(std::move(bad));
    }
}

result<FramePtr> line_frame(RowFormat format, std::string_view text) {
    if (format == RowFormat::codex_rollout) {
        if (!codex_may_be_frame(text)) {
            return FramePtr{};
        }
        boost::system::error_code ec;
        auto v = boost::json::parse(text, ec);
        if (ec) {
            return ec;
        }
        auto row = v.is_object() ? codex_frame_row(v.get_object()) : std::nullopt;
        return row ? Frame::from_row_compact(std::move(*row)) : FramePtr{};
    }
    auto f = Frame::parse(text);
    if (!f) {
        if (f.error() == make_error_code(errc::bad_request)) {
            return FramePtr{}; // JSON, but not an object: a row that is not a frame
        }
        return f.error();
    }
    return (*f)->is_frame() ? std::move(*f) : FramePtr{};
}

result<FramePtr> RowReader::parse(std::string_view text, std::uint64_t line, bool counted) {
    if (text.empty()) {
        return FramePtr{};
    }
    auto f = line_frame(format_, text);
    if (!f) {
        BadLine bad{line + 1, "not JSON (" + f.error().message() + ")"};
        if (strict_) {
            bad_line_ = std::move(bad);
            return make_error_code(errc::corrupt_data);
        }
        note(std::move(bad), counted);
        return FramePtr{}; // skipped and reported, never served
    }
    if (!*f) {
        return FramePtr{};
    }
    return held_form(std::move(*f)); // what is read is held: an oversize frame's reference form
}

void RowReader::renumber(std::uint64_t line_origin) noexcept {
    for (auto& b : bad_lines_) {
        b.line -= line_origin; // noted with end-relative line numbers
    }
}

void RowReader::clear() noexcept {
    bad_lines_.clear();
    total_ = 0;
}

} // namespace sluice::detail
