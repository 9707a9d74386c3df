// Test support: a small tmpfs mounted for a test (root only), to fill a disk for real.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace sluice::test {

/// A small tmpfs (root only); unmounted at the end. `ok()` is false where mounting is not allowed.
class SmallDisk {
public:
    SmallDisk(const std::filesystem::path& at, const std::string& size)
        : at_(at) {
        std::filesystem::create_directories(at_);
        const std::string opts = "size=" + size;
        ok_ = ::geteuid() == 0 && ::mount("tmpfs", at_.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    }

    ~SmallDisk() {
        if (ok_) {
            ::umount2(at_.c_str(), MNT_DETACH);
        }
    }

    SmallDisk(const SmallDisk&) = delete;
    SmallDisk& operator=(const SmallDisk&) = delete;

    /// Whether it is mounted.
    [[nodiscard]] bool ok() const noexcept { return ok_; }

    /// Mounts it again with `opts` and `flags` (MS_RDONLY, say). @return whether it worked.
    bool remount(const std::string& opts, unsigned long flags = 0) {
        return ::mount("tmpfs", at_.c_str(), "tmpfs", MS_REMOUNT | flags, opts.c_str()) == 0;
    }

private:
    std::filesystem::path at_;
    bool ok_{false};
};

} // namespace sluice::test
