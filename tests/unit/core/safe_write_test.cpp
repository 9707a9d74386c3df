// Unit tests of core/safe_write.hpp: whole replacement, no temp left behind, the OS reason on
// failure.
#include "support/files.hpp"

#include <sluice/core/safe_write.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

namespace sluice {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        std::random_device rd;
        path_ = fs::temp_directory_path() / ("sluice-safe-write-" + std::to_string(rd()));
        fs::create_directories(path_);
    }

    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

using sluice::test::slurp;

TEST(SafeWrite, CreatesAFileWithEveryByte) {
    TempDir dir;
    const auto file = dir.path() / "meta.json";
    std::string big(1 << 20, 'x');
    big[12345] = '\0';
    ASSERT_TRUE(safe_write(file, big).has_value());
    EXPECT_EQ(slurp(file), big);
    EXPECT_FALSE(fs::exists(dir.path() / "meta.json.tmp"));
}

TEST(SafeWrite, ReplacesAnExistingFileWhole) {
    TempDir dir;
    const auto file = dir.path() / "meta.json";
    ASSERT_TRUE(safe_write(file, "a much longer first version\n").has_value());
    ASSERT_TRUE(safe_write(file, "v2\n").has_value());
    EXPECT_EQ(slurp(file), "v2\n");
}

TEST(SafeWrite, ReturnsTheOsReasonWhenTheDirectoryIsMissing) {
    TempDir dir;
    const auto r = safe_write(dir.path() / "no-such-dir" / "meta.json", "x");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), boost::system::error_code(ENOENT, boost::system::system_category()));
    EXPECT_FALSE(r.error().message().empty());
}

TEST(SafeWrite, LeavesTheOldFileWhenTheRenameFails) {
    TempDir dir;
    // The target is a non-empty directory: rename(2) fails after the temp was written.
    const auto target = dir.path() / "occupied";
    fs::create_directories(target / "inside");
    const auto r = safe_write(target, "x");
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(fs::is_directory(target / "inside"));
    EXPECT_FALSE(fs::exists(dir.path() / "occupied.tmp")); // the temp is removed
}

} // namespace
} // namespace sluice
