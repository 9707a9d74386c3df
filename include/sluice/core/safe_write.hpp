// Safe write: the one way sluice replaces a file (temp, every byte checked, fsync, rename, dir
// fsync).
#pragma once

#include <sluice/core/error.hpp>

#include <boost/system/result.hpp>

#include <filesystem>
#include <string_view>

namespace sluice {

/// Replaces `path` with `bytes` so that a crash leaves either the old file or the new one, whole:
/// writes `<path>.tmp` (every byte checked, EINTR and short writes retried), `fsync`s it, renames
/// it over `path`, then `fsync`s the directory. On any failure the temp file is removed and
/// `path` is untouched.
///
/// @return the OS reason (`boost::system::system_category`, from `errno`) of the first step
/// that failed; its `message()` is the reason a person reads (e.g. "No space left on device").
///
/// @par Thread safety
/// Safe from any thread; blocking (it `fsync`s twice): never call it on an I/O thread — the hub
/// runs it on its writer (hub/writer.hpp).
boost::system::result<void> safe_write(const std::filesystem::path& path, std::string_view bytes);

/// What a failed write means to a client: `errc::insufficient_storage` for no space or a size
/// limit (ENOSPC, EDQUOT, EFBIG: HTTP 507), `errc::read_only` for a read-only file system or
/// file (EROFS, EACCES, EPERM: 409), `errc::io_error` for the rest (EIO, …). A sluice code is
/// returned as it is. @par Thread safety: pure.
[[nodiscard]] errc write_errc(const boost::system::error_code& os) noexcept;

/// The OS error of the last failed call (`errno`, system category). @par Thread safety: per
/// thread, as errno.
[[nodiscard]] boost::system::error_code last_os_error() noexcept;

/// As `safe_write(path, bytes)`, the new file created with permission bits `mode` (e.g. 0600
/// for a secret): the temp file is set to `mode` before the first byte is written, so the
/// secret is never readable by others, not even for a moment.
boost::system::result<void>
safe_write(const std::filesystem::path& path, std::string_view bytes, unsigned mode);

} // namespace sluice
