// pread_all: exactly n bytes at an offset, or false.
#include "unit/conversation/fixtures.hpp"

#include <sluice/core/file_read.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace {

TEST(FileRead, ReadsExactlyTheBytesAtAnOffsetOrFails) {
    sluice::test::TempDir dir;
    const std::string path = dir.path() + "/f";
    std::ofstream(path) << "0123456789";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string buf(4, '\0');
    ASSERT_TRUE(sluice::pread_all(fd, buf.data(), buf.size(), 3));
    EXPECT_EQ(buf, "3456");
    EXPECT_TRUE(sluice::pread_all(fd, buf.data(), 0, 100)); // nothing asked: nothing to fail
    EXPECT_FALSE(sluice::pread_all(fd, buf.data(), buf.size(), 8)); // only 2 bytes left
    EXPECT_FALSE(sluice::pread_all(-1, buf.data(), buf.size(), 0));
    ::close(fd);
}

} // namespace
