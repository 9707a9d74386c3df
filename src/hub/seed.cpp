// seed_transcript (seed.hpp): a continued session's frames copied into its new seat's folder.
#include "seed.hpp"

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/core/safe_write.hpp>

#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace sluice::hub {

namespace {

// Bytes written at once while seeding. Basis: a few pipe-sized writes per syscall, small
// beside the writer thread's other work.
constexpr std::size_t SEED_CHUNK_BYTES = 256 * 1024;

Failure os_failure(int err, const std::string& what) {
    const boost::system::error_code ec(err, boost::system::system_category());
    return Failure{make_error_code(write_errc(ec)), what + ": " + ec.message()};
}

} // namespace

Result<void> seed_transcript(
    const std::filesystem::path& from,
    const std::filesystem::path& to,
    RowFormat format,
    std::uint64_t max_bytes) {
    std::ifstream in(from, std::ios::binary);
    std::error_code sec;
    const auto size = std::filesystem::file_size(from, sec);
    if (!in || sec) {
        return Failure::of(errc::io_error, "cannot read " + from.string());
    }
    // Past max_bytes: from the newest max_bytes, the first whole line on (the byte before the
    // cut is read too, so a cut on a line's start keeps that line).
    const std::uint64_t cut = size > max_bytes ? size - max_bytes : 0;
    const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return os_failure(errno, "cannot create " + to.string());
    }
    std::string out;
    const auto flush = [&]() -> bool {
        std::size_t done = 0;
        while (done < out.size()) {
            const auto n = ::write(fd, out.data() + done, out.size() - done);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return false;
            }
            done += static_cast<std::size_t>(n);
        }
        out.clear();
        return true;
    };
    std::string line;
    std::string converted; // a rollout line's frame row
    bool ok = true;
    // One pass from the cut. `wait_for_turn`: frames before the first that opens a turn are
    // left out (the turn scan warmed up on the first few); @return whether a frame was kept.
    const auto copy = [&](bool wait_for_turn) -> bool {
        in.clear();
        in.seekg(static_cast<std::streamoff>(cut > 0 ? cut - 1 : 0));
        if (cut > 0) {
            std::getline(in, line); // the rest of the line the cut fell in
        }
        TurnScan scan;
        bool keeping = !wait_for_turn;
        bool kept = false;
        // getline without a newline at the end of the file: a row still being written, left out.
        while (ok && std::getline(in, line) && !in.eof()) {
            std::string_view text = line;
            if (format == RowFormat::codex_rollout) {
                auto row = codex_may_be_frame(line) ? codex_frame_row(line) : std::nullopt;
                if (!row) {
                    continue;
                }
                converted = boost::json::serialize(*row);
                text = converted;
            }
            auto f = Frame::parse(text);
            if (!f || !(*f)->is_frame()) {
                continue;
            }
            if (!keeping) {
                const bool opens = scan.opens_turn(**f);
                keeping = opens && scan.fed() > TURN_SCAN_WARMUP;
                if (!keeping) {
                    continue;
                }
            }
            kept = true;
            out.append(text).push_back('\n');
            if (out.size() >= SEED_CHUNK_BYTES) {
                ok = flush();
            }
        }
        return kept;
    };
    if (!copy(cut > 0) && ok && cut > 0 && !in.bad()) {
        copy(false); // one turn longer than max_bytes: its newest part
    }
    ok = ok && flush() && ::fdatasync(fd) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok) {
        return os_failure(err, "cannot write " + to.string());
    }
    if (in.bad()) {
        return Failure::of(errc::io_error, "cannot read " + from.string());
    }
    return {};
}

} // namespace sluice::hub
