// The scan that reads a whole transcript forward: frames and their turn openings, O(file).
#include "transcript_scan.hpp"

#include "lines.hpp"

#include <sluice/conversation/row_scan.hpp>
#include <sluice/core/error.hpp>

#include <string>

namespace sluice::detail {

using boost::system::result;

result<void> scan_file(
    int fd,
    std::uint64_t end,
    bool row_scan,
    const ScanProgressFn& progress_fn,
    RowReader& rows,
    TurnScan& scan,
    std::uint64_t& lines,
    const std::function<void(const ScannedFrame&)>& on_frame) {
    ForwardLines r(fd, 0, end);
    std::uint64_t line = 0;
    std::uint64_t pos = 0;
    ScanProgress progress(progress_fn, end);
    // A row the scanner is not sure of (not JSON, too deep or large) is parsed in full, which
    // reports it as before.
    RowScanner scanner;
    std::string type;
    TurnFacts facts;
    while (auto l = r.next()) {
        switch (row_scan ? scanner.scan(l->text, type, facts) : RowKind::unsure) {
        case RowKind::frame:
            on_frame({pos, l->offset, line, scan.opens_turn(type, facts)});
            ++pos;
            break;
        case RowKind::not_frame:
            break;
        case RowKind::unsure: {
            auto f = rows.parse(l->text, line, /*counted=*/true);
            if (!f) {
                return f.error();
            }
            if (*f) {
                on_frame({pos, l->offset, line, scan.opens_turn(**f)});
                ++pos;
            }
            break;
        }
        }
        ++line;
        progress.at(r.position());
    }
    if (r.failed()) {
        return make_error_code(errc::io_error);
    }
    lines = line;
    return {};
}

} // namespace sluice::detail
