#pragma once
// The build's identity: the project's version (CMakeLists.txt) and the commit it was built from.

#include <string_view>

namespace sluice {

/// The release version, e.g. "0.1.0".
[[nodiscard]] std::string_view version() noexcept;

/// The commit the binary was built from: `git describe --always --dirty` at build time, or
/// "unknown" outside a git checkout (a source tarball).
[[nodiscard]] std::string_view commit() noexcept;

} // namespace sluice
