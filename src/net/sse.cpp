// The SSE parser: line splitting (CR/LF/CRLF across feeds), fields, dispatch, limits.
#include <sluice/core/error.hpp>
#include <sluice/net/sse.hpp>

#include <algorithm>

namespace sluice::sse {

namespace {

constexpr std::string_view BOM = "\xEF\xBB\xBF";

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty()
           && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) {
        s.remove_prefix(1);
    }
    while (!s.empty()
           && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
        s.remove_suffix(1);
    }
    return s;
}

} // namespace

bool is_done(const Event& ev) noexcept {
    return trim(ev.data) == "[DONE]";
}

Parser::Parser(Limits limits) noexcept
    : limits_(limits) {
}

bool Parser::has_partial() const noexcept {
    return !line_.empty() || fields_seen_;
}

boost::system::error_code Parser::feed(std::string_view bytes, std::vector<Event>& out) {
    if (failed_) {
        return errc::payload_too_large;
    }
    const std::size_t n = bytes.size();
    std::size_t i = 0;
    if (after_cr_) {
        after_cr_ = false;
        if (n > 0 && bytes[0] == '\n') {
            i = 1; // the LF of a CRLF split across feeds
        }
    }
    const char* base = bytes.data();
    while (i < n) {
        const char* end =
            std::find_if(base + i, base + n, [](char c) { return c == '\n' || c == '\r'; });
        const auto j = static_cast<std::size_t>(end - base);
        if (j == n) {
            if (line_.size() + (n - i) > limits_.max_line) {
                failed_ = true;
                return errc::payload_too_large;
            }
            line_.append(base + i, n - i);
            break;
        }
        std::string_view line;
        if (line_.empty()) {
            line = bytes.substr(i, j - i);
        } else {
            line_.append(base + i, j - i);
            line = line_;
        }
        if (line.size() > limits_.max_line) {
            failed_ = true;
            return errc::payload_too_large;
        }
        process_line(line, out);
        line_.clear();
        if (data_.size() > limits_.max_event) {
            failed_ = true;
            return errc::payload_too_large;
        }
        if (bytes[j] == '\r') {
            if (j + 1 < n) {
                if (bytes[j + 1] == '\n') {
                    i = j + 2; // CRLF: consume both
                    continue;
                }
            } else {
                after_cr_ = true;
            }
        }
        i = j + 1;
    }
    return {};
}

void Parser::process_line(std::string_view line, std::vector<Event>& out) {
    if (!bom_checked_) {
        bom_checked_ = true;
        if (line.substr(0, BOM.size()) == BOM) {
            line.remove_prefix(BOM.size());
        }
    }
    if (line.empty()) {
        dispatch(out);
        return;
    }
    if (line.front() == ':') {
        ++comments_;
        return;
    }
    std::string_view field = line;
    std::string_view value;
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') {
            value.remove_prefix(1);
        }
    }
    fields_seen_ = true;
    if (field == "data") {
        if (have_data_) {
            data_.push_back('\n');
        }
        data_.append(value);
        have_data_ = true;
    } else if (field == "event") {
        type_.assign(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) {
            last_id_.assign(value);
        }
    } else if (field == "retry") {
        if (!value.empty() && value.size() <= 19
            && std::all_of(
                value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            std::uint64_t v = 0;
            for (const char c : value) {
                v = v * 10 + static_cast<std::uint64_t>(c - '0');
            }
            retry_ = v;
        }
    }
    // Any other field is ignored, as the spec says.
}

void Parser::dispatch(std::vector<Event>& out) {
    if (have_data_) {
        Event ev;
        if (!type_.empty()) {
            ev.type = type_;
        }
        ev.data = std::move(data_);
        ev.id = last_id_;
        ev.retry = retry_;
        out.push_back(std::move(ev));
    }
    data_.clear();
    type_.clear();
    retry_.reset();
    have_data_ = false;
    fields_seen_ = false;
}

} // namespace sluice::sse
