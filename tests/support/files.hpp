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

/// Writes `text` as the whole file at `path`, its folders made first.
inline void spill(const std::filesystem::path& path, const std::string& text) {
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path());
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

/// Appends `text` to the file at `path` (made, with its folders, if missing).
inline void append_to(const std::filesystem::path& path, const std::string& text) {
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path());
    }
    std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

} // namespace sluice::test
