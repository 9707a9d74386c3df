// Reading a file whole-or-not-at-all at an offset: the one positioned read every module uses.
#pragma once

#include <cstdint>

namespace sluice {

/// Reads exactly `n` bytes of `fd` at `offset` into `dst` (`pread`, short reads and EINTR
/// retried). @return false on an error or on the end of the file before `n` bytes.
///
/// @par Thread safety
/// Safe from any thread (it does not move the descriptor's offset); blocking: never on an I/O
/// thread.
bool pread_all(int fd, char* dst, std::uint64_t n, std::uint64_t offset);

} // namespace sluice
