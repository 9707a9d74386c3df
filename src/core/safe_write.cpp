// Safe write: the one way sluice replaces a file (temp, every byte checked, fsync, rename, dir
// fsync).
#include <sluice/core/safe_write.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace sluice {

boost::system::error_code last_os_error() noexcept {
    return {errno, boost::system::system_category()};
}

errc write_errc(const boost::system::error_code& os) noexcept {
    if (os.category() == error_category()) {
        return static_cast<errc>(os.value());
    }
    if (os.category() != boost::system::system_category()
        && os.category() != boost::system::generic_category()) {
        return errc::io_error;
    }
    switch (os.value()) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return errc::insufficient_storage;
    case EROFS:
    case EACCES:
    case EPERM:
        return errc::read_only;
    default:
        return errc::io_error;
    }
}

namespace {

// Closes a descriptor once, on every path.
class Fd {
public:
    explicit Fd(int fd) noexcept
        : fd_(fd) {}

    ~Fd() { (void)close(); }

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    [[nodiscard]] int get() const noexcept { return fd_; }

    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }

    // A failed close after a write can report a lost write (NFS): it is checked.
    int close() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd >= 0 ? ::close(fd) : 0;
    }

private:
    int fd_;
};

boost::system::error_code write_all(int fd, std::string_view bytes) {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return last_os_error();
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return {};
}

boost::system::error_code
write_temp(const std::filesystem::path& tmp, std::string_view bytes, unsigned mode) {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd.valid()) {
        return last_os_error();
    }
    // A temp file left by a crash keeps its old bits through O_CREAT: set them.
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
        return last_os_error();
    }
    if (auto ec = write_all(fd.get(), bytes)) {
        return ec;
    }
    if (::fsync(fd.get()) != 0) {
        return last_os_error();
    }
    if (fd.close() != 0) {
        return last_os_error();
    }
    return {};
}

boost::system::error_code sync_dir(const std::filesystem::path& dir) {
    Fd fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
        return last_os_error();
    }
    if (::fsync(fd.get()) != 0) {
        return last_os_error();
    }
    return {};
}

} // namespace

boost::system::result<void> safe_write(const std::filesystem::path& path, std::string_view bytes) {
    return safe_write(path, bytes, 0644);
}

boost::system::result<void>
safe_write(const std::filesystem::path& path, std::string_view bytes, unsigned mode) {
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    if (auto ec = write_temp(tmp, bytes, mode)) {
        (void)::unlink(tmp.c_str());
        return ec;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const auto ec = last_os_error();
        (void)::unlink(tmp.c_str());
        return ec;
    }
    if (auto ec = sync_dir(path.parent_path())) {
        return ec; // the new file is in place; only its durability is in doubt
    }
    return {};
}

} // namespace sluice
