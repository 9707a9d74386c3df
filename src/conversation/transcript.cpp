// Transcript: open (index, count or numbered from the end), append, refresh, sync, full scans.
#include "transcript_parts.hpp"

#include <sluice/core/error.hpp>

#include <utility>

namespace sluice {

using boost::system::result;

std::filesystem::path Transcript::index_path(const std::filesystem::path& transcript) {
    auto p = transcript;
    p += ".sidx";
    return p;
}

Transcript::Transcript(std::unique_ptr<Parts> parts) noexcept
    : parts_(std::move(parts)) {
}

Transcript::Transcript(Transcript&&) noexcept = default;
Transcript& Transcript::operator=(Transcript&&) noexcept = default;
Transcript::~Transcript() = default;

result<Transcript> Transcript::open(std::filesystem::path path, TranscriptOptions options) {
    auto file = detail::TranscriptFile::open(std::move(path), options.read_only, options.follow);
    if (!file) {
        return file.error();
    }
    Transcript t(std::make_unique<Parts>(std::move(options), std::move(*file)));
    auto& p = *t.parts_;
    const bool valid = p.index.load(p.index_file(), p.file.fd(), p.file.end(), p.index_writable());
    if (!valid && p.options.end_relative && p.file.end() > 0) {
        p.index.open_uncounted(p.file.end());
    } else if (!valid && p.options.count_on_open) {
        if (auto r = t.count(); !r) {
            return r.error();
        }
    }
    return t;
}

std::uint64_t Transcript::frame_count() const noexcept {
    return parts_->index.frames();
}

std::uint64_t Transcript::line_count() const noexcept {
    return parts_->index.lines();
}

std::uint64_t Transcript::size_bytes() const noexcept {
    return parts_->file.end();
}

std::uint64_t Transcript::torn_bytes() const noexcept {
    return parts_->file.torn_bytes();
}

const std::filesystem::path& Transcript::path() const noexcept {
    return parts_->file.path();
}

const std::optional<BadLine>& Transcript::bad_line() const noexcept {
    return parts_->rows.bad_line();
}

const std::vector<BadLine>& Transcript::bad_lines() const noexcept {
    return parts_->rows.bad_lines();
}

std::uint64_t Transcript::bad_lines_total() const noexcept {
    return parts_->rows.total();
}

bool Transcript::index_was_valid() const noexcept {
    return parts_->index.loaded();
}

bool Transcript::counted() const noexcept {
    return parts_->index.counted();
}

std::uint64_t Transcript::origin() const noexcept {
    return parts_->index.origin();
}

result<void> Transcript::count() {
    auto& p = *parts_;
    if (auto r = p.index.count(p.file.fd(), p.file.end(), p.options.progress); !r) {
        return r;
    }
    if (p.index_writable()) {
        return p.index.write(p.index_file(), p.file.end(), false);
    }
    return {};
}

result<void> Transcript::warm_scan() {
    auto& p = *parts_;
    if (p.scan) {
        return {};
    }
    std::vector<FramePtr> newest;
    detail::BackwardLines r(p.file.fd(), p.file.end(), p.file.open_tail());
    while (newest.size() < TURN_SCAN_WARMUP) {
        auto l = r.prev();
        if (!l) {
            break;
        }
        auto f = detail::line_frame(p.options.format, l->text);
        if (f && *f) {
            newest.push_back(*f);
        }
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    TurnScan scan;
    for (auto it = newest.rbegin(); it != newest.rend(); ++it) {
        scan.opens_turn(**it);
    }
    p.scan = scan;
    return {};
}

result<void> Transcript::append(const Frame& f) {
    auto& p = *parts_;
    if (!f.is_frame()) {
        return make_error_code(errc::bad_request);
    }
    if (p.options.read_only) {
        return make_error_code(errc::conflict);
    }
    if (auto r = warm_scan(); !r) {
        return r;
    }
    const bool opens = p.scan->opens_turn(f);
    const std::uint64_t offset = p.file.end();
    if (auto r = p.file.append_line(f.json()); !r) {
        return r;
    }
    p.index.add_frame(offset, opens);
    p.index.add_line();
    return {};
}

result<std::vector<FramePtr>> Transcript::refresh() {
    auto& p = *parts_;
    auto grown = p.file.grown();
    if (!grown) {
        return grown.error();
    }
    std::vector<FramePtr> out;
    if (grown->size > p.file.end()) {
        if (auto r = warm_scan(); !r) {
            return r.error();
        }
    }
    const std::string_view buf = grown->lines; // whole lines, each with its newline
    std::size_t at = 0;
    while (at < buf.size()) {
        const auto len = buf.find('\n', at) - at;
        auto f = p.rows.parse(buf.substr(at, len), p.index.lines(), p.index.counted());
        if (!f) {
            return f.error();
        }
        if (*f) {
            p.index.add_frame(p.file.end() + at, p.scan->opens_turn(**f));
            out.push_back(std::move(*f));
        }
        p.index.add_line();
        at += len + 1;
    }
    p.file.take(*grown);
    return out;
}

result<void> Transcript::sync() {
    auto& p = *parts_;
    if (!p.index.counted() || (p.options.read_only && !p.index_writable())) {
        return {};
    }
    if (!p.options.read_only) {
        if (auto r = p.file.datasync(); !r) {
            return r;
        }
    }
    if (!p.index_writable()) {
        return {};
    }
    return p.index.sync(p.index_file(), p.file.end());
}

result<void> Transcript::rescan() {
    auto& p = *parts_;
    if (!p.index.counted()) {
        return make_error_code(errc::conflict); // end-relative positions: `resolve` first
    }
    p.rows.clear();
    std::vector<detail::Checkpoint> cps;
    std::vector<detail::Checkpoint> ops;
    TurnScan scan;
    std::uint64_t lines = 0;
    const std::uint64_t origin = p.index.origin();
    std::uint64_t frames = origin;
    auto r = detail::scan_file(
        p.file.fd(),
        p.file.end(),
        // The row scanner reads frame rows; a rollout's lines are translated (parsed in full).
        p.options.row_scan && p.options.format == RowFormat::frames,
        p.options.progress,
        p.rows,
        scan,
        lines,
        [&](const detail::ScannedFrame& f) {
            const auto pos = origin + f.pos;
            if (pos % TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
                cps.push_back({pos, f.offset, f.line});
            }
            if (f.opens_turn) {
                ops.push_back({pos, f.offset, f.line});
            }
            frames = pos + 1;
        });
    if (!r) {
        return r.error();
    }
    p.index.replace(std::move(cps), std::move(ops), frames, lines);
    p.scan = scan;
    return {};
}

result<std::vector<std::uint64_t>> Transcript::openings() {
    if (auto r = rescan(); !r) {
        return r.error();
    }
    std::vector<std::uint64_t> out;
    out.reserve(parts_->index.openings().size());
    for (const auto& o : parts_->index.openings()) {
        out.push_back(o.pos);
    }
    return out;
}

result<void> Transcript::build_index() {
    if (auto r = rescan(); !r) {
        return r.error();
    }
    auto& p = *parts_;
    if (!p.index_writable()) {
        return p.options.read_only ? make_error_code(errc::conflict) : result<void>{};
    }
    return p.index.write(p.index_file(), p.file.end(), true);
}

result<TranscriptCount> Transcript::start_count() const {
    auto counter = parts_->index.start_count(parts_->file.fd());
    if (!counter) {
        return counter.error();
    }
    return TranscriptCount(std::move(*counter));
}

result<void> Transcript::resolve(TranscriptCount&& count) {
    auto& p = *parts_;
    if (!count.counter_) {
        return make_error_code(errc::bad_request);
    }
    auto line_origin = p.index.resolve(*count.counter_);
    if (!line_origin) {
        return line_origin.error();
    }
    p.rows.renumber(*line_origin);
    if (p.index_writable()) {
        return p.index.write(p.index_file(), p.file.end(), false);
    }
    return {};
}

} // namespace sluice
