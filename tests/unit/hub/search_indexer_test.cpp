// Tests of hub/search_indexer.hpp: files indexed in the background, read on from the offset the
// index keeps (never again from their start), a truncated or replaced file indexed again, a
// hosted seat's reset archived, a removed seat's hits gone, a lost index rebuilt.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/search_indexer.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

namespace sluice::hub {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using test::append_to;

std::string prompt(const std::string& text) {
    return json::serialize(json::object{
               {"type", "user"},
               {"cwd", "/work/p"},
               {"timestamp", "2026-01-02T03:04:05.000Z"},
               {"message", json::object{{"role", "user"}, {"content", text}}}})
           + "\n";
}

std::string reply(const std::string& text) {
    return json::serialize(json::object{
               {"type", "assistant"},
               {"message",
                json::object{
                    {"content", json::array{json::object{{"type", "text"}, {"text", text}}}}}}})
           + "\n";
}

const std::string BOOKKEEPING =
    R"({"type":"queue-operation","operation":"enqueue","content":"zebra"})"
    "\n";

std::set<std::uint64_t> seqs(const SearchIndexer& ix, const std::string& q) {
    std::set<std::uint64_t> out;
    for (const auto& h : ix.search(SearchQuery{.q = q}).hits) {
        out.insert(h.seq);
    }
    return out;
}

SearchTarget foreign(const std::string& seat) {
    return SearchTarget{seat, "", "claude", "", false, false};
}

TEST(SearchIndexer, NumbersFramesAndTurnsAndReadsOnFromWhereItWasLeft) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "s1.jsonl";
    append_to(file, BOOKKEEPING + prompt("first giraffe") + reply("a giraffe answer"));
    SearchIndexer ix(fs::path(dir.path()) / "search.db");
    ix.changed(file, foreign("c-s1"));
    ix.wait_idle();
    auto page = ix.search(SearchQuery{.q = "giraffe"});
    ASSERT_EQ(page.hits.size(), 2U);
    EXPECT_EQ(page.hits[0].seq, 1U); // the queue operation is no frame: it takes no seq
    EXPECT_EQ(page.hits[0].turn, 1U);
    EXPECT_EQ(page.hits[1].seq, 0U);
    EXPECT_EQ(page.hits[1].project, "/work/p");
    EXPECT_EQ(page.hits[1].time_ms, 1767323045000);
    EXPECT_TRUE(seqs(ix, "zebra").empty()) << "bookkeeping rows are not indexed";

    // The first line rewritten in place (same size, same file): not read again.
    {
        auto text = test::slurp(file);
        const auto at = text.find("first giraffe");
        text.replace(at, 13, "first buffalo");
        std::FILE* f = std::fopen(file.c_str(), "r+");
        ASSERT_NE(f, nullptr);
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    }
    append_to(file, prompt("second giraffe"));
    ix.changed(file, foreign("c-s1"));
    ix.wait_idle();
    EXPECT_EQ(seqs(ix, "giraffe"), (std::set<std::uint64_t>{0, 1, 2}));
    EXPECT_TRUE(seqs(ix, "buffalo").empty()) << "the file was read again from its start";
    EXPECT_EQ(ix.search(SearchQuery{.q = "second"}).hits.at(0).turn, 2U);
    const auto p = ix.progress();
    EXPECT_EQ(p.total, 1U);
    EXPECT_EQ(p.done, 1U);
    EXPECT_EQ(p.queued, 0U);
}

TEST(SearchIndexer, IndexesATruncatedOrReplacedFileAgain) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "s1.jsonl";
    append_to(file, prompt("old words here") + reply("more old words"));
    SearchIndexer ix(fs::path(dir.path()) / "search.db");
    ix.changed(file, foreign("c-s1"));
    ix.wait_idle();
    ASSERT_EQ(seqs(ix, "old words"), (std::set<std::uint64_t>{0, 1}));
    test::spill(file, prompt("new")); // shorter: truncated and rewritten
    ix.changed(file, foreign("c-s1"));
    ix.wait_idle();
    EXPECT_TRUE(seqs(ix, "old words").empty());
    EXPECT_EQ(seqs(ix, "new"), (std::set<std::uint64_t>{0}));
    // Replaced by another file (a rename over it), longer than it was.
    const fs::path other = fs::path(dir.path()) / "tmp.jsonl";
    test::spill(other, prompt("replacement text") + prompt("replacement again"));
    fs::rename(other, file);
    ix.changed(file, foreign("c-s1"));
    ix.wait_idle();
    EXPECT_TRUE(seqs(ix, "new").empty());
    EXPECT_EQ(seqs(ix, "replacement"), (std::set<std::uint64_t>{0, 1}));
}

TEST(SearchIndexer, ArchivesAHostedSeatsOldEpochAtAReset) {
    sluice::test::TempDir dir;
    const fs::path seat = fs::path(dir.path()) / "seat1";
    append_to(seat / "transcript.jsonl", prompt("before the reset"));
    SearchIndexer ix(fs::path(dir.path()) / "search.db");
    ix.changed(seat / "transcript.jsonl", SearchTarget{"s1", "e1", "sluice", "/w", true, false});
    ix.wait_idle();
    // More frames of e1 land, then the journal archives the file and starts e2.
    append_to(seat / "transcript.jsonl", prompt("late in e1"));
    fs::rename(seat / "transcript.jsonl", seat / "transcript.e1.jsonl");
    append_to(seat / "transcript.jsonl", prompt("after the reset"));
    ix.changed(seat / "transcript.jsonl", SearchTarget{"s1", "e2", "sluice", "/w", true, false});
    ix.wait_idle();
    auto page = ix.search(SearchQuery{.q = "the reset"});
    ASSERT_EQ(page.hits.size(), 2U);
    for (const auto& h : page.hits) {
        EXPECT_EQ(h.archived, h.epoch == "e1");
        EXPECT_EQ(h.seq, 0U);
    }
    auto late = ix.search(SearchQuery{.q = "late in e1"});
    ASSERT_EQ(late.hits.size(), 1U) << "the old epoch's last frames are read from its archive";
    EXPECT_TRUE(late.hits[0].archived);
    EXPECT_EQ(late.hits[0].seq, 1U);

    // A rebuilt index finds the archive and the live file again, the same way.
    ix.stop();
    fs::remove(fs::path(dir.path()) / "search.db");
    SearchIndexer again(fs::path(dir.path()) / "search.db");
    announce_transcripts(again, seat, "s1", "e2", "/w");
    again.wait_idle();
    EXPECT_EQ(again.search(SearchQuery{.q = "the reset"}).hits.size(), 2U);
    EXPECT_EQ(again.search(SearchQuery{.q = "late in e1"}).hits.size(), 1U);
    EXPECT_TRUE(again.search(SearchQuery{.q = "late in e1"}).hits.at(0).archived);
}

TEST(SearchIndexer, ForgetsARemovedSeat) {
    sluice::test::TempDir dir;
    append_to(fs::path(dir.path()) / "a.jsonl", prompt("shared word"));
    append_to(fs::path(dir.path()) / "b.jsonl", prompt("shared word"));
    SearchIndexer ix(fs::path(dir.path()) / "search.db");
    ix.changed(fs::path(dir.path()) / "a.jsonl", foreign("a"));
    ix.changed(fs::path(dir.path()) / "b.jsonl", foreign("b"));
    ix.wait_idle();
    ASSERT_EQ(ix.search(SearchQuery{.q = "shared"}).hits.size(), 2U);
    ix.remove_seat("a");
    ix.wait_idle();
    const auto page = ix.search(SearchQuery{.q = "shared"});
    ASSERT_EQ(page.hits.size(), 1U);
    EXPECT_EQ(page.hits[0].seat, "b");
}

TEST(SearchIndexer, RebuildsADamagedIndexFromTheFilesAnnounced) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "s.jsonl";
    append_to(file, prompt("durable words"));
    const auto db = fs::path(dir.path()) / "search.db";
    {
        SearchIndexer ix(db);
        ix.changed(file, foreign("s"));
        ix.wait_idle();
        EXPECT_TRUE(ix.progress().rebuilt) << "made at first: everything announced is read";
    }
    {
        SearchIndexer intact(db);
        EXPECT_FALSE(intact.progress().rebuilt);
    }
    fs::remove(db.string() + "-wal");
    fs::remove(db.string() + "-shm");
    test::spill(db, "this is not a database at all, but it is long enough to look like one");
    SearchIndexer ix(db);
    EXPECT_TRUE(ix.progress().rebuilt);
    EXPECT_TRUE(ix.search(SearchQuery{.q = "durable"}).hits.empty());
    ix.changed(file, foreign("s"));
    ix.wait_idle();
    EXPECT_EQ(ix.search(SearchQuery{.q = "durable"}).hits.size(), 1U);
}

// Indexing a burst fills SQLite's page cache (up to 16 MiB); once the indexer is idle it goes,
// so a hub's memory after a burst is its windows, not the cache beside them (issue 31).
TEST(SearchIndexer, GivesSqlitesCacheBackWhenIdle) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "big.jsonl";
    std::string rows;
    for (int i = 0; i < 4000; ++i) {
        std::string text;
        for (int w = 0; w < 150; ++w) {
            text += "w" + std::to_string(i * 150 + w) + " "; // distinct words: many index pages
        }
        rows += reply(text);
    }
    append_to(file, rows);
    SearchIndexer ix(fs::path(dir.path()) / "search.db");
    ix.changed(file, foreign("c-big"));
    ix.wait_idle();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sqlite3_memory_used() > (2 << 20) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_LT(sqlite3_memory_used(), 2 << 20)
        << "SQLite holds " << sqlite3_memory_used() << " bytes after indexing " << rows.size()
        << " bytes, idle";
    EXPECT_EQ(ix.search(SearchQuery{.q = "w599999"}).hits.size(), 1U) << "it reads on as before";
}

} // namespace
} // namespace sluice::hub
