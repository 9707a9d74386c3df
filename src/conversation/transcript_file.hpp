// Private: a transcript's file: opened with its torn tail settled, whole lines appended, bytes
// read.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::detail {

/// Writes `a` then `b` whole to `fd` (one `writev` while it takes both): a frame and its '\n'
/// without copying the frame into a line first (an oversize frame is megabytes).
/// @return the OS reason of a failed write (system category; a zero-byte write is EIO).
boost::system::error_code write_all(int fd, std::string_view a, std::string_view b = {});

/// An owned file descriptor: closed when destroyed or reset; moved, never copied.
///
/// @par Thread safety
/// None: one owner.
class OwnedFd {
public:
    OwnedFd() = default; ///< no descriptor

    /// Owns `fd` (-1: none).
    explicit OwnedFd(int fd) noexcept
        : fd_(fd) {}

    /// Takes the descriptor of `o`.
    OwnedFd(OwnedFd&& o) noexcept
        : fd_(std::exchange(o.fd_, -1)) {}

    /// Closes its own descriptor and takes the one of `o`.
    OwnedFd& operator=(OwnedFd&& o) noexcept {
        if (this != &o) {
            reset(std::exchange(o.fd_, -1));
        }
        return *this;
    }

    OwnedFd(const OwnedFd&) = delete;            ///< single owner
    OwnedFd& operator=(const OwnedFd&) = delete; ///< single owner

    ~OwnedFd() { reset(); } ///< closes

    /// The descriptor, or -1.
    int get() const noexcept { return fd_; }

    /// Closes the descriptor held, then holds `fd`.
    void reset(int fd = -1) noexcept;

private:
    int fd_{-1};
};

/// What another process appended past a file's end, as read by `TranscriptFile::grown`.
struct Grown {
    std::string lines;    ///< its whole lines, newlines included (empty: none complete yet)
    std::uint64_t size{}; ///< the file's size when it was read
};

/// The file of a transcript: the one descriptor, the end of its whole lines and the torn tail.
/// It knows bytes and lines, not frames: the numbering is `TranscriptIndex`'s.
///
/// On open a torn last line (no newline, or a complete last line that is not JSON) is cut away
/// and logged; read-only it is ignored instead, and a complete last row lacking only its newline
/// is kept (`open_tail`). Following a file another process writes, a last piece with no newline
/// is a line still being written: never cut, waited for (`grown`).
///
/// @par Thread safety
/// None: one owner (its `Transcript`). Movable, not copyable.
class TranscriptFile {
public:
    /// Opens (or, unless `read_only`, creates) the file at `path` and settles its tail.
    /// @return errors as `Transcript::open`.
    static boost::system::result<TranscriptFile>
    open(std::filesystem::path path, bool read_only, bool follow);

    /// The descriptor (for the line readers).
    int fd() const noexcept { return fd_.get(); }

    /// The file's path.
    const std::filesystem::path& path() const noexcept { return path_; }

    /// Bytes of complete lines (with an `open_tail`, the last row's too).
    std::uint64_t end() const noexcept { return end_; }

    /// Bytes past `end` not taken: a torn tail cut or ignored on open, or a line being written.
    std::uint64_t torn_bytes() const noexcept { return torn_bytes_; }

    /// Read-only: the last row is complete but has no newline.
    bool open_tail() const noexcept { return open_tail_; }

    /// Opened read-only.
    bool read_only() const noexcept { return read_only_; }

    /// Appends `json` and a newline. A failed write is undone (the file is cut back to `end`).
    /// @return the OS reason of a failed write (system category: ENOSPC, EFBIG, EIO, …).
    boost::system::result<void> append_line(std::string_view json);

    /// Makes what was appended durable (fdatasync). @return the OS reason (system category).
    boost::system::result<void> datasync();

    /// Reads `n` bytes at `offset`. @return `errc::io_error` on a failed or short read.
    boost::system::result<std::string> read(std::uint64_t offset, std::uint64_t n) const;

    /// Reads the whole lines appended past `end` by another process (at most 64 MiB a call: the
    /// rest is read by the next). `end` moves only by `take`. @return `errc::conflict` when the
    /// file is now shorter than `end` (truncated: reopen it); `errc::io_error`.
    boost::system::result<Grown> grown();

    /// Takes what `grown` read: `end` moves past its whole lines, the rest counts as torn.
    void take(const Grown& g) noexcept;

private:
    TranscriptFile() = default;
    boost::system::result<void> check_tail();
    std::optional<std::pair<std::uint64_t, bool>> last_piece() const;

    std::filesystem::path path_;
    OwnedFd fd_;
    std::uint64_t end_{};
    std::uint64_t torn_bytes_{};
    bool open_tail_{};
    bool read_only_{};
    bool follow_{};
};

} // namespace sluice::detail
