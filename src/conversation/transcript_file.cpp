// A transcript's file: open and the torn tail, appends undone on failure, reads, what others
// append.
#include "transcript_file.hpp"

#include "lines.hpp"

#include <sluice/core/error.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/core/safe_write.hpp>

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace sluice::detail {

using boost::system::result;

namespace {

boost::system::error_code io_error() {
    return make_error_code(errc::io_error);
}

// The offset just past the last newline before `hi` (0 if none), read back in 64 KiB blocks.
std::optional<std::uint64_t> after_last_newline(int fd, std::uint64_t hi) {
    std::array<char, 65536> buf{};
    while (hi > 0) {
        const std::uint64_t lo = hi > buf.size() ? hi - buf.size() : 0;
        if (!pread_all(fd, buf.data(), hi - lo, lo)) {
            return std::nullopt;
        }
        if (const void* nl = ::memrchr(buf.data(), '\n', hi - lo)) {
            return lo + static_cast<std::uint64_t>(static_cast<const char*>(nl) - buf.data()) + 1;
        }
        hi = lo;
    }
    return 0;
}

} // namespace

boost::system::error_code write_all(int fd, std::string_view a, std::string_view b) {
    while (!a.empty() || !b.empty()) {
        std::array<::iovec, 2> v{};
        int n = 0;
        for (const auto part : {a, b}) {
            if (!part.empty()) {
                // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): writev only reads it
                auto* base = const_cast<char*>(part.data());
                v.at(static_cast<std::size_t>(n++)) = {base, part.size()};
            }
        }
        const ssize_t w = ::writev(fd, v.data(), n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return last_os_error();
        }
        if (w == 0) {
            return {EIO, boost::system::system_category()};
        }
        auto took = static_cast<std::size_t>(w);
        const auto from_a = std::min(took, a.size());
        a.remove_prefix(from_a);
        took -= from_a;
        b.remove_prefix(took);
    }
    return {};
}

void OwnedFd::reset(int fd) noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    fd_ = fd;
}

result<TranscriptFile>
TranscriptFile::open(std::filesystem::path path, bool read_only, bool follow) {
    TranscriptFile t;
    t.path_ = std::move(path);
    t.read_only_ = read_only;
    t.follow_ = follow;
    const int flags = read_only ? O_RDONLY : (O_RDWR | O_CREAT | O_APPEND);
    t.fd_.reset(::open(t.path_.c_str(), flags | O_CLOEXEC, 0644));
    if (t.fd() < 0) {
        if (errno == EROFS || errno == EACCES || errno == EPERM) {
            return last_os_error(); // the caller may open it read-only instead
        }
        return make_error_code(
            errno == ENOENT   ? errc::not_found
            : errno == EISDIR ? errc::bad_request
                              : errc::io_error);
    }

    struct stat st {};

    if (::fstat(t.fd(), &st) != 0) {
        return io_error();
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error_code(errc::bad_request);
    }
    t.end_ = static_cast<std::uint64_t>(st.st_size);
    if (auto r = t.check_tail(); !r) {
        return r.error();
    }
    return t;
}

result<void> TranscriptFile::check_tail() {
    if (end_ == 0) {
        return {};
    }
    char last = 0;
    if (!pread_all(fd(), &last, 1, end_ - 1)) {
        return io_error();
    }
    std::uint64_t good = end_;
    if (last != '\n' && follow_) {
        // Being written by its owner: wait for the newline (grown), never cut it.
        const auto nl = after_last_newline(fd(), end_);
        if (!nl) {
            return io_error();
        }
        torn_bytes_ = end_ - *nl;
        end_ = *nl;
        return {};
    }
    if (last != '\n') {
        auto piece = last_piece();
        if (!piece) {
            return io_error();
        }
        if (piece->second) {
            // A complete row that lacks only its newline: keep it (and, writable, add the newline).
            if (read_only_) {
                open_tail_ = true;
                return {};
            }
            if (auto ec = write_all(fd(), "\n")) {
                return ec;
            }
            ++end_;
            return {};
        }
        good = piece->first;
    } else if (!read_only_) {
        // A complete last line that is not JSON is torn too; a reader reports it instead.
        BackwardLines r(fd(), end_);
        auto l = r.prev();
        if (r.failed()) {
            return io_error();
        }
        boost::system::error_code ec;
        if (l && !l->text.empty()) {
            boost::json::parse(l->text, ec);
            if (ec) {
                good = l->offset;
            }
        }
    }
    if (good == end_) {
        return {};
    }
    torn_bytes_ = end_ - good;
    spdlog::warn(
        "transcript {}: a torn last line ({} bytes) is {}",
        path_.string(),
        torn_bytes_,
        read_only_ ? "ignored" : "truncated away");
    if (!read_only_ && ::ftruncate(fd(), static_cast<off_t>(good)) != 0) {
        return io_error();
    }
    end_ = good;
    return {};
}

std::optional<std::pair<std::uint64_t, bool>> TranscriptFile::last_piece() const {
    // The piece after the last newline: its offset, and whether it is complete JSON.
    const auto start = after_last_newline(fd(), end_);
    if (!start) {
        return std::nullopt;
    }
    if (end_ - *start > (64ULL << 20)) {
        return std::pair{*start, false}; // too large to check: treat as torn
    }
    std::string piece(static_cast<std::size_t>(end_ - *start), '\0');
    if (!pread_all(fd(), piece.data(), piece.size(), *start)) {
        return std::nullopt;
    }
    boost::system::error_code ec;
    boost::json::parse(piece, ec);
    return std::pair{*start, !ec};
}

result<void> TranscriptFile::append_line(std::string_view json) {
    if (auto ec = write_all(fd(), json, "\n")) {
        // Leave no torn piece behind for the next line to follow.
        if (::ftruncate(fd(), static_cast<off_t>(end_)) != 0) {
            spdlog::error("transcript {}: a failed append could not be undone", path_.string());
        }
        return ec;
    }
    end_ += json.size() + 1;
    return {};
}

result<void> TranscriptFile::datasync() {
    if (::fdatasync(fd()) != 0) {
        return last_os_error();
    }
    return {};
}

result<std::string> TranscriptFile::read(std::uint64_t offset, std::uint64_t n) const {
    std::string out(n, '\0');
    if (!pread_all(fd(), out.data(), n, offset)) {
        return make_error_code(errc::io_error);
    }
    return out;
}

result<Grown> TranscriptFile::grown() {
    struct stat st {};

    if (::fstat(fd(), &st) != 0) {
        return make_error_code(errc::io_error);
    }
    Grown g{{}, static_cast<std::uint64_t>(st.st_size)};
    if (g.size < end_) {
        return make_error_code(errc::conflict); // truncated under us
    }
    if (g.size == end_) {
        return g;
    }
    // Whole lines only: up to the last newline of what was appended (bounded per call).
    constexpr std::uint64_t MAX_STEP = 64ULL << 20;
    g.lines.resize(static_cast<std::size_t>(std::min(g.size - end_, MAX_STEP)));
    if (!pread_all(fd(), g.lines.data(), g.lines.size(), end_)) {
        return make_error_code(errc::io_error);
    }
    const void* nl = ::memrchr(g.lines.data(), '\n', g.lines.size());
    const auto whole =
        nl == nullptr ? 0
                      : static_cast<std::size_t>(static_cast<const char*>(nl) - g.lines.data()) + 1;
    g.lines.resize(whole); // nothing whole: a line still being written, waited for
    return g;
}

void TranscriptFile::take(const Grown& g) noexcept {
    end_ += g.lines.size();
    torn_bytes_ = g.size - end_;
    if (!g.lines.empty()) {
        open_tail_ = false;
    }
}

} // namespace sluice::detail
