// Tests of hub/search_index.hpp: the SQLite store — a round trip, substring matches with case
// ignored, the LIKE path of short queries, cursor paging, removal, archived epochs, a damaged
// file made anew, and snippets.
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/search_index.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace sluice::hub {
namespace {

namespace fs = std::filesystem;

SearchDoc doc(std::string seat, std::uint64_t seq, std::string text, std::string epoch = "e1") {
    return SearchDoc{
        std::move(seat),
        std::move(epoch),
        seq,
        seq / 2 + 1,
        1000 + static_cast<std::int64_t>(seq),
        std::move(text)};
}

SearchFile file_of(std::string path, std::string seat, std::uint64_t offset) {
    SearchFile f;
    f.path = std::move(path);
    f.seat = std::move(seat);
    f.epoch = "e1";
    f.offset = offset;
    return f;
}

std::set<std::uint64_t> seqs(const SearchPage& p) {
    std::set<std::uint64_t> out;
    for (const auto& h : p.hits) {
        out.insert(h.seq);
    }
    return out;
}

std::string joined(const std::vector<SnippetPiece>& pieces) {
    std::string out;
    for (const auto& p : pieces) {
        out += p.match ? "[" + p.text + "]" : p.text;
    }
    return out;
}

struct Store {
    sluice::test::TempDir dir;
    bool recreated{};
    std::unique_ptr<SearchIndex> index =
        SearchIndex::open(fs::path(dir.path()) / "search.db", recreated);
};

TEST(SearchIndex, KeepsDocsAndFileOffsetsAcrossReopening) {
    sluice::test::TempDir dir;
    const auto path = fs::path(dir.path()) / "search.db";
    bool recreated = true;
    {
        auto ix = SearchIndex::open(path, recreated);
        EXPECT_TRUE(recreated) << "a missing index is made: everything is read again";
        ix->set_seat("s1", "sluice", "/work/p");
        ASSERT_TRUE(ix->add(
            {doc("s1", 0, "run cargo build --release"), doc("s1", 3, "ls -la /etc/hosts")},
            file_of("/t/a.jsonl", "s1", 123)));
    }
    auto ix = SearchIndex::open(path, recreated);
    EXPECT_FALSE(recreated);
    EXPECT_EQ(ix->docs(), 2U);
    auto f = ix->file("/t/a.jsonl");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->offset, 123U);
    EXPECT_EQ(f->seat, "s1");
    EXPECT_FALSE(ix->file("/t/other.jsonl"));
    const auto page = ix->search(SearchQuery{.q = "/etc/hosts"});
    ASSERT_EQ(page.hits.size(), 1U);
    const auto& h = page.hits[0];
    EXPECT_EQ(h.seat, "s1");
    EXPECT_EQ(h.epoch, "e1");
    EXPECT_EQ(h.seq, 3U);
    EXPECT_EQ(h.turn, 2U);
    EXPECT_EQ(h.time_ms, 1003);
    EXPECT_EQ(h.source, "sluice");
    EXPECT_EQ(h.project, "/work/p");
    EXPECT_FALSE(h.archived);
    EXPECT_EQ(joined(h.snippet), "ls -la [/etc/hosts]");
}

TEST(SearchIndex, FindsSubstringsInsideWordsIgnoringCase) {
    Store s;
    ASSERT_TRUE(s.index->add(
        {doc("s1", 0, "The MigrationRunner failed"),
         doc("s1", 1, "migrations are done"),
         doc("s1", 2, "nothing here")},
        file_of("/f", "s1", 1)));
    EXPECT_EQ(
        seqs(s.index->search(SearchQuery{.q = "migration"})), (std::set<std::uint64_t>{0, 1}));
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = "IONRUN"})), (std::set<std::uint64_t>{0}));
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = "ations ar"})), (std::set<std::uint64_t>{1}));
    EXPECT_TRUE(s.index->search(SearchQuery{.q = "migrationz"}).hits.empty());
    // A quote in the query is a literal, not FTS5 syntax.
    ASSERT_TRUE(s.index->add({doc("s1", 3, R"(echo "a b" OR c)")}, file_of("/f", "s1", 2)));
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = R"("a b" OR)"})), (std::set<std::uint64_t>{3}));
    EXPECT_FALSE(s.index->search(SearchQuery{.q = "ration"}).scanned);
}

TEST(SearchIndex, AnswersQueriesShorterThanATrigramByAScan) {
    Store s;
    ASSERT_TRUE(s.index->add(
        {doc("s1", 0, "x = 1"), doc("s1", 1, "a_b 100%"), doc("s1", 2, "QZ")},
        file_of("/f", "s1", 1)));
    auto p = s.index->search(SearchQuery{.q = "qz"});
    EXPECT_TRUE(p.scanned);
    EXPECT_EQ(seqs(p), (std::set<std::uint64_t>{2}));
    // LIKE's own wildcards are literals here.
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = "%"})), (std::set<std::uint64_t>{1}));
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = "_"})), (std::set<std::uint64_t>{1}));
    EXPECT_EQ(seqs(s.index->search(SearchQuery{.q = "1"})), (std::set<std::uint64_t>{0, 1}));
}

TEST(SearchIndex, PagesWithACursorNewestFirstWithoutRepeats) {
    Store s;
    std::vector<SearchDoc> docs;
    for (std::uint64_t i = 0; i < 45; ++i) {
        docs.push_back(doc("s1", i, "needle " + std::to_string(i)));
    }
    ASSERT_TRUE(s.index->add(docs, file_of("/f", "s1", 1)));
    std::vector<std::uint64_t> seen;
    SearchQuery q{.q = "needle", .limit = 20};
    int pages = 0;
    while (true) {
        auto p = s.index->search(q);
        ++pages;
        for (const auto& h : p.hits) {
            seen.push_back(h.seq);
        }
        if (!p.next_cursor) {
            break;
        }
        q.cursor = *p.next_cursor;
    }
    EXPECT_EQ(pages, 3);
    ASSERT_EQ(seen.size(), 45U);
    for (std::size_t i = 0; i < seen.size(); ++i) {
        EXPECT_EQ(seen[i], 44 - i);
    }
}

TEST(SearchIndex, FiltersBySeatProjectSourceAndTime) {
    Store s;
    s.index->set_seat("a", "sluice", "/p1");
    s.index->set_seat("b", "claude", "/p2");
    ASSERT_TRUE(s.index->add(
        {doc("a", 0, "same words"), doc("a", 5, "same words")}, file_of("/a", "a", 1)));
    ASSERT_TRUE(s.index->add({doc("b", 1, "same words")}, file_of("/b", "b", 1)));
    EXPECT_EQ(s.index->search(SearchQuery{.q = "same"}).hits.size(), 3U);
    EXPECT_EQ(s.index->search(SearchQuery{.q = "same", .seat = "b"}).hits.size(), 1U);
    EXPECT_EQ(s.index->search(SearchQuery{.q = "same", .project = "/p1"}).hits.size(), 2U);
    EXPECT_EQ(s.index->search(SearchQuery{.q = "same", .source = "claude"}).hits.size(), 1U);
    EXPECT_EQ(
        seqs(s.index->search(SearchQuery{.q = "same", .since_ms = 1002})),
        (std::set<std::uint64_t>{5}));
}

TEST(SearchIndex, RemovesASeatAndAnEpochAndMarksArchivedEpochs) {
    Store s;
    ASSERT_TRUE(s.index->add(
        {doc("a", 0, "alpha one", "e1"), doc("a", 0, "alpha two", "e2")}, file_of("/a", "a", 1)));
    ASSERT_TRUE(s.index->add({doc("b", 0, "alpha three")}, file_of("/b", "b", 1)));
    s.index->archive_epoch("a", "e1");
    auto p = s.index->search(SearchQuery{.q = "alpha", .seat = "a"});
    ASSERT_EQ(p.hits.size(), 2U);
    for (const auto& h : p.hits) {
        EXPECT_EQ(h.archived, h.epoch == "e1") << h.epoch;
    }
    s.index->remove_epoch("a", "e2");
    EXPECT_EQ(s.index->search(SearchQuery{.q = "alpha", .seat = "a"}).hits.size(), 1U);
    s.index->remove_seat("a");
    p = s.index->search(SearchQuery{.q = "alpha"});
    ASSERT_EQ(p.hits.size(), 1U);
    EXPECT_EQ(p.hits[0].seat, "b");
    EXPECT_FALSE(s.index->file("/a"));
    EXPECT_TRUE(s.index->file("/b"));
    EXPECT_EQ(s.index->docs(), 1U);
}

TEST(SearchIndex, MakesADamagedFileAnewAndEmpty) {
    sluice::test::TempDir dir;
    const auto path = fs::path(dir.path()) / "search.db";
    {
        std::ofstream out(path, std::ios::binary);
        out << std::string(8192, 'x'); // not SQLite at all
    }
    bool recreated = false;
    auto ix = SearchIndex::open(path, recreated);
    EXPECT_TRUE(recreated);
    EXPECT_EQ(ix->docs(), 0U);
    ASSERT_TRUE(ix->add({doc("s", 0, "works again")}, file_of("/f", "s", 1)));
    EXPECT_EQ(ix->search(SearchQuery{.q = "again"}).hits.size(), 1U);
    ix.reset();
    // A SQLite file of another schema is not this index either.
    fs::remove(path);
    fs::remove(path.string() + "-wal");
    fs::remove(path.string() + "-shm");
    {
        bool r = false;
        auto other = SearchIndex::open(path, r);
    }
    {
        std::ofstream out(path, std::ios::binary | std::ios::in | std::ios::out);
        out.seekp(60); // the header's user_version field
        out.put('\x07');
    }
    ix = SearchIndex::open(path, recreated);
    EXPECT_TRUE(recreated);
}

TEST(SearchIndex, SnippetsMarkMatchesWithContextCutAtCharacterBoundaries) {
    EXPECT_EQ(
        joined(make_snippet("find the Needle in a needle stack", "needle")),
        "find the [Needle] in a [needle] stack");
    const std::string long_text = std::string(300, 'a') + " é needle é " + std::string(300, 'b');
    const auto s = make_snippet(long_text, "NEEDLE");
    ASSERT_GE(s.size(), 4U);
    EXPECT_EQ(s.front().text, "…");
    EXPECT_EQ(s.back().text, "…");
    std::size_t bytes = 0;
    int marks = 0;
    for (const auto& p : s) {
        bytes += p.text.size();
        marks += p.match ? 1 : 0;
    }
    EXPECT_EQ(marks, 1);
    EXPECT_LT(bytes, 2 * SEARCH_SNIPPET_CONTEXT_BYTES + 20);
    // Not found (a match the index folded otherwise): the head, unmarked.
    const auto head = make_snippet("plain text", "zzz");
    ASSERT_EQ(head.size(), 1U);
    EXPECT_FALSE(head[0].match);
}

} // namespace
} // namespace sluice::hub
