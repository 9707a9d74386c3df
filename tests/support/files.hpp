// Test helper: a file's whole contents, read in binary.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sluice::test {

/// The bytes of the file at `path`; empty when it cannot be read.
inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace sluice::test
