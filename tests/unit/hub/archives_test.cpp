// Unit tests of sluice/hub/archives.hpp: what pruning removes and keeps, folder sizes, names.
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/archives.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace {

namespace fs = std::filesystem;
using sluice::test::TempDir;

void write(const fs::path& p, std::size_t bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << std::string(bytes, 'x');
}

TEST(Archives, PruneRemovesOldResetArchivesAndRemovedSeatsOnly) {
    TempDir dir;
    const fs::path seats = fs::path(dir.path()) / "seats";
    const fs::path archive = fs::path(dir.path()) / "archive";
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
    write(seats / "s1" / "transcript.jsonl", 10);                    // live: never pruned
    write(seats / "s1" / "meta.json", 10);                           // never pruned
    write(seats / "s1" / "transcript.eold.jsonl", 100);              // old archive: pruned
    write(seats / "s1" / "transcript.eold.jsonl.sidx", 7);           // its index goes with it
    write(seats / "s1" / "transcript.enew.jsonl", 100);              // young archive: kept
    write(seats / "s2" / "transcript.ecur.jsonl", 100);              // s2's current epoch: kept
    write(archive / "s3.20260101T000000Z" / "transcript.jsonl", 50); // old removed seat: pruned
    write(archive / "s4.20261201T000000Z" / "meta.json", 5);         // young removed seat: kept
    for (const auto* p :
         {"seats/s1/transcript.jsonl",
          "seats/s1/meta.json",
          "seats/s1/transcript.eold.jsonl",
          "seats/s2/transcript.ecur.jsonl"}) {
        fs::last_write_time(fs::path(dir.path()) / p, old);
    }
    fs::last_write_time(archive / "s3.20260101T000000Z", old);

    const auto pruned = sluice::hub::prune_archives(
        seats, archive, std::chrono::hours(24 * 7), {{"s1", "enew"}, {"s2", "ecur"}});
    EXPECT_EQ(pruned.files, 1U);
    EXPECT_EQ(pruned.folders, 1U);
    EXPECT_EQ(pruned.bytes, 150U);
    EXPECT_TRUE(fs::exists(seats / "s1" / "transcript.jsonl"));
    EXPECT_TRUE(fs::exists(seats / "s1" / "meta.json"));
    EXPECT_FALSE(fs::exists(seats / "s1" / "transcript.eold.jsonl"));
    EXPECT_FALSE(fs::exists(seats / "s1" / "transcript.eold.jsonl.sidx"));
    EXPECT_TRUE(fs::exists(seats / "s1" / "transcript.enew.jsonl"));
    EXPECT_TRUE(fs::exists(seats / "s2" / "transcript.ecur.jsonl"));
    EXPECT_FALSE(fs::exists(archive / "s3.20260101T000000Z"));
    EXPECT_TRUE(fs::exists(archive / "s4.20261201T000000Z"));

    // Nothing older is left: a second pruning removes nothing; missing roots are no error.
    const auto again = sluice::hub::prune_archives(seats, archive, std::chrono::hours(1), {});
    EXPECT_EQ(again.folders, 0U);
    EXPECT_EQ(again.files, 1U); // s2's old ecur, no longer named its current epoch
    const auto none = sluice::hub::prune_archives(
        fs::path(dir.path()) / "absent",
        fs::path(dir.path()) / "absent2",
        std::chrono::hours(1),
        {});
    EXPECT_EQ(none.files + none.folders, 0U);
}

TEST(Archives, FolderBytesCountsEveryFileBelow) {
    TempDir dir;
    write(fs::path(dir.path()) / "a" / "one", 3);
    write(fs::path(dir.path()) / "a" / "b" / "two", 4);
    EXPECT_EQ(sluice::hub::folder_bytes(fs::path(dir.path()) / "a"), 7U);
    EXPECT_EQ(sluice::hub::folder_bytes(fs::path(dir.path()) / "missing"), 0U);
}

TEST(Archives, ArchivedFolderNameCarriesTheIdAndAUtcStamp) {
    const auto at = std::chrono::system_clock::from_time_t(1'764'806'400); // 2025-12-04 00:00 UTC
    EXPECT_EQ(sluice::hub::archived_folder_name("s-abc", at), "s-abc.20251204T000000Z");
}

TEST(Archives, RetireFolderMovesItUnderTheArchiveWithAFreshAgeOrDeletesIt) {
    TempDir dir;
    const fs::path seat = fs::path(dir.path()) / "seats" / "s1";
    write(seat / "transcript.jsonl", 40);
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
    fs::last_write_time(seat, old);
    const fs::path to = fs::path(dir.path()) / "archive" / "s1.20261205T000000Z"; // parent made
    EXPECT_FALSE(sluice::hub::retire_folder(seat, to));
    EXPECT_FALSE(fs::exists(seat));
    EXPECT_EQ(sluice::hub::folder_bytes(to), 40U);
    EXPECT_GT(fs::last_write_time(to), old + std::chrono::hours(24)); // its age starts now

    write(seat / "meta.json", 5);
    EXPECT_FALSE(sluice::hub::retire_folder(seat, {})); // purge
    EXPECT_FALSE(fs::exists(seat));

    // A folder that cannot be moved (its target's parent is a file) says why and stays.
    write(seat / "meta.json", 5);
    write(fs::path(dir.path()) / "blocker", 1);
    EXPECT_TRUE(sluice::hub::retire_folder(seat, fs::path(dir.path()) / "blocker" / "s1"));
    EXPECT_TRUE(fs::exists(seat / "meta.json"));
}

} // namespace
