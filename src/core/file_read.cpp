// The one positioned whole read (file_read.hpp).
#include <sluice/core/file_read.hpp>

#include <unistd.h>

#include <cerrno>

namespace sluice {

bool pread_all(int fd, char* dst, std::uint64_t n, std::uint64_t offset) {
    while (n > 0) {
        const ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        dst += r;
        n -= static_cast<std::uint64_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
    return true;
}

} // namespace sluice
