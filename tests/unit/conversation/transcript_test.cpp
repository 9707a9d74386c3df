// Tests of Transcript: append/sync/reopen, torn tails, the index, windows and pages from the end.
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using sluice::Budget;
using sluice::Frame;
using sluice::FramePtr;
using sluice::Transcript;
using sluice::TranscriptOptions;
using sluice::test::TempDir;

FramePtr row(const std::string& json) {
    auto f = Frame::parse(json);
    EXPECT_TRUE(f.has_value()) << json;
    return *f;
}

std::string j(const FramePtr& f) {
    return std::string(f->json());
}

FramePtr prompt(int i) {
    return row(R"({"type":"user","message":{"content":"prompt )" + std::to_string(i) + R"("}})");
}

FramePtr answer(int i, std::size_t pad = 10) {
    return row(
        R"({"type":"assistant","message":{"content":[{"type":"text","text":")"
        + std::string(pad, 'a') + std::to_string(i) + R"("}]}})");
}

// Appends `turns` turns of `len` frames each.
std::vector<FramePtr> fill(Transcript& t, int turns, int len, std::size_t pad = 10) {
    std::vector<FramePtr> all;
    for (int i = 0; i < turns; ++i) {
        all.push_back(prompt(i));
        for (int j = 1; j < len; ++j) {
            all.push_back(answer(j, pad));
        }
    }
    for (const auto& f : all) {
        EXPECT_TRUE(t.append(*f).has_value());
    }
    EXPECT_TRUE(t.sync().has_value());
    return all;
}

std::uint64_t file_size(const std::string& p) {
    return std::filesystem::file_size(p);
}

TEST(Transcript, AppendsFramesAndReopensFromItsIndex) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    std::vector<FramePtr> all;
    {
        auto t = Transcript::open(path);
        ASSERT_TRUE(t.has_value());
        all = fill(*t, 30, 50);
        EXPECT_EQ(t->frame_count(), all.size());
    }
    EXPECT_TRUE(std::filesystem::exists(Transcript::index_path(path)));
    auto t = Transcript::open(path, {.read_only = true});
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), all.size());
    auto w = t->load_window();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->first(), 0U);
    ASSERT_EQ(w->size(), all.size());
    for (std::uint64_t p = 0; p < all.size(); ++p) {
        ASSERT_EQ(w->at(p)->json(), all[p]->json());
    }
    auto ops = t->openings();
    ASSERT_TRUE(ops.has_value());
    EXPECT_EQ(ops->size(), 30U);
    EXPECT_EQ(ops->at(1), 50U);
}

TEST(Transcript, AppendRejectsRowsThatAreNotFrames) {
    TempDir dir;
    auto t = Transcript::open(dir.file("a.jsonl"));
    ASSERT_TRUE(t.has_value());
    auto r = t->append(*row(R"({"type":"summary","summary":"x"})"));
    EXPECT_EQ(r.error(), make_error_code(sluice::errc::bad_request));
    EXPECT_EQ(t->frame_count(), 0U);
}

TEST(Transcript, OpenReportsMissingFilesAndDirectories) {
    TempDir dir;
    EXPECT_EQ(
        Transcript::open(dir.file("none.jsonl"), {.read_only = true}).error(),
        make_error_code(sluice::errc::not_found));
    EXPECT_EQ(
        Transcript::open(dir.path(), {.read_only = true}).error(),
        make_error_code(sluice::errc::bad_request));
    EXPECT_EQ(Transcript::open(dir.path()).error(), make_error_code(sluice::errc::bad_request));
}

TEST(Transcript, ATornTailIsTruncatedAndNothingElseIsLost) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    std::vector<FramePtr> all;
    {
        auto t = Transcript::open(path);
        ASSERT_TRUE(t.has_value());
        all = fill(*t, 3, 4);
    }
    const auto good = file_size(path);
    {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        out << R"({"type":"assistant","message":{"content":[{"type":"te)"; // torn mid-line
    }
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    EXPECT_GT(t->torn_bytes(), 0U);
    EXPECT_EQ(file_size(path), good);
    EXPECT_EQ(t->frame_count(), all.size());
    ASSERT_TRUE(t->append(*answer(99)).has_value());
    ASSERT_TRUE(t->sync().has_value());
    auto again = Transcript::open(path);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->torn_bytes(), 0U);
    EXPECT_EQ(again->frame_count(), all.size() + 1);
    auto w = again->load_window();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->at(all.size())->json(), answer(99)->json());
    EXPECT_EQ(w->at(2)->json(), all[2]->json());
}

TEST(Transcript, ATornFixtureLosesOnlyItsTornLine) {
    TempDir dir;
    const auto& fx = sluice::test::fixture_transcripts()[13]; // a7da6a22, 1 MB
    const auto lines = sluice::test::read_lines(sluice::test::fixture_path(fx.file));
    std::string text;
    for (const auto& l : lines) {
        text += l + "\n";
    }
    const std::string& last = lines.back();
    const auto path = dir.file("foreign.jsonl");
    sluice::test::write_file(path, text.substr(0, text.size() - last.size() / 2 - 1));
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->torn_bytes(), last.size() - last.size() / 2);
    EXPECT_EQ(file_size(path), text.size() - last.size() - 1);
    std::uint64_t frames = 0;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        auto f = Frame::parse(lines[i]);
        frames += (f && (*f)->is_frame()) ? 1U : 0U;
    }
    EXPECT_EQ(t->frame_count(), frames);
}

TEST(Transcript, ALastLineThatIsNotJsonIsTornToo) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    sluice::test::write_file(path, j(prompt(0)) + "\n" + "{\"type\":\"user\", oops\n");
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), 1U);
    EXPECT_EQ(file_size(path), prompt(0)->json().size() + 1);
}

TEST(Transcript, ANonJsonLineInsideIsSkippedAndReportedWithItsLineNumber) {
    TempDir dir;
    const auto path = dir.file("bad.jsonl");
    const std::string torn_frame = R"({"type":"assistant","message":{"role":"assis)";
    sluice::test::write_file(
        path,
        j(prompt(0)) + "\nnot json at all\n" + torn_frame + "\n" + j(answer(1)) + "\n"
            + j(prompt(2)) + "\n");
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), 3U); // the bad lines take no position
    auto w = t->load_window();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->first(), 0U);
    EXPECT_EQ(w->end(), 3U);
    EXPECT_EQ(w->at(1)->json(), answer(1)->json());
    ASSERT_EQ(t->bad_lines().size(), 2U);
    EXPECT_EQ(t->bad_lines()[0].line, 3U); // found reading back from the end
    EXPECT_EQ(t->bad_lines()[1].line, 2U);
    EXPECT_NE(t->bad_lines()[0].what.find("not JSON"), std::string::npos);
    auto p = t->page(3, 20);
    ASSERT_TRUE(p.has_value());
    std::size_t served = 0;
    for (const auto& turn : p->turns) {
        served += turn.frames.size();
    }
    EXPECT_EQ(served, 3U);
    EXPECT_EQ(t->bad_lines_total(), 2U);
}

TEST(Transcript, ANonJsonLineInsideFailsAStrictRead) {
    TempDir dir;
    const auto path = dir.file("bad.jsonl");
    sluice::test::write_file(path, j(prompt(0)) + "\nnot json at all\n" + j(answer(1)) + "\n");
    auto t = Transcript::open(path, {.read_only = true, .strict = true});
    ASSERT_TRUE(t.has_value());
    auto w = t->load_window();
    ASSERT_FALSE(w.has_value());
    EXPECT_EQ(w.error(), make_error_code(sluice::errc::corrupt_data));
    ASSERT_TRUE(t->bad_line().has_value());
    EXPECT_EQ(t->bad_line()->line, 2U);
}

TEST(Transcript, RowsThatAreNotFramesTakeNoPosition) {
    TempDir dir;
    const auto path = dir.file("foreign.jsonl");
    sluice::test::write_file(
        path,
        R"({"type":"summary","summary":"t"})"
        "\n42\n\n"
            + j(prompt(0)) + "\n"
            + R"({"type":"queue-operation","operation":"enqueue"})"
              "\n"
            + j(answer(1)) + "\n");
    auto t = Transcript::open(path, {.read_only = true});
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), 2U);
    EXPECT_EQ(t->line_count(), 6U);
    auto w = t->load_window();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->at(1)->json(), answer(1)->json());
    EXPECT_TRUE(w->opens_turn(0));
}

TEST(Transcript, IndexCatchesUpOnFramesAppendedAfterTheLastSync) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    {
        auto t = Transcript::open(path);
        ASSERT_TRUE(t.has_value());
        fill(*t, 2, 3);
        ASSERT_TRUE(t->append(*prompt(7)).has_value()); // no sync: the index lags
        ASSERT_TRUE(t->append(*answer(8)).has_value());
    }
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), 8U);
    auto w = t->load_window();
    ASSERT_TRUE(w.has_value());
    EXPECT_TRUE(w->opens_turn(6));
}

TEST(Transcript, AWindowFromTheEndReadsAboutTheWindowNotTheFile) {
    TempDir dir;
    const auto path = dir.file("big.jsonl");
    {
        auto t = Transcript::open(path);
        ASSERT_TRUE(t.has_value());
        fill(*t, 400, 40, 4000); // ~64 MB
    }
    ASSERT_GT(file_size(path), 60U << 20);
    auto t = Transcript::open(path, {.read_only = true});
    ASSERT_TRUE(t.has_value());
    auto read_bytes = [] {
        std::ifstream io("/proc/self/io");
        std::string key;
        std::uint64_t v = 0;
        while (io >> key >> v) {
            if (key == "rchar:") {
                return v;
            }
        }
        return std::uint64_t{0};
    };
    const Budget b = Budget::scaled(1000, 256 * 1024);
    const auto before = read_bytes();
    auto w = t->load_window(b);
    const auto used = read_bytes() - before;
    ASSERT_TRUE(w.has_value());
    EXPECT_LE(w->bytes(), b.cap_bytes + b.slack_bytes);
    EXPECT_TRUE(w->opens_turn(w->first()));
    EXPECT_EQ(w->end(), t->frame_count());
    EXPECT_LT(used, 4U << 20); // 1 MiB blocks: the window and a block or two, not 64 MB
}

TEST(Transcript, ACursorBelowTheFloorIsAnsweredFromTheTranscript) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    auto all = fill(*t, 60, 5);
    auto w = t->load_window(Budget::scaled(40, 1 << 30));
    ASSERT_TRUE(w.has_value());
    ASSERT_GT(w->first(), 0U);
    auto from_window = w->page(std::nullopt, 100);
    ASSERT_TRUE(from_window && from_window->cursor);
    ASSERT_FALSE(w->page(from_window->cursor).has_value());
    std::uint64_t cursor = *from_window->cursor;
    std::uint64_t next_expected = cursor; // pages join without a gap down to position 0
    int pages = 0;
    for (;;) {
        auto p = t->page(cursor);
        ASSERT_TRUE(p.has_value());
        ASSERT_FALSE(p->turns.empty());
        EXPECT_LE(p->turns.size(), sluice::SUBSCRIBE_TURNS);
        std::uint64_t pos = p->turns.front().first;
        for (const auto& turn : p->turns) {
            ASSERT_EQ(turn.first, pos);
            for (const auto& f : turn.frames) {
                ASSERT_EQ(f->json(), all[pos]->json());
                ++pos;
            }
        }
        ASSERT_EQ(pos, next_expected);
        ++pages;
        if (!p->cursor) {
            ASSERT_EQ(p->turns.front().first, 0U);
            break;
        }
        cursor = next_expected = *p->cursor;
    }
    EXPECT_GE(pages, 2);
}

} // namespace

namespace {

TEST(Transcript, ACompleteLastRowWithoutItsNewlineIsKept) {
    TempDir dir;
    const auto path = dir.file("seat.jsonl");
    sluice::test::write_file(path, j(prompt(0)) + "\n" + j(answer(1)));
    {
        auto ro = Transcript::open(path, {.read_only = true});
        ASSERT_TRUE(ro.has_value());
        EXPECT_EQ(ro->torn_bytes(), 0U);
        EXPECT_EQ(ro->frame_count(), 2U);
        auto w = ro->load_window();
        ASSERT_TRUE(w.has_value());
        ASSERT_EQ(w->size(), 2U);
        EXPECT_EQ(w->at(1)->json(), answer(1)->json());
        auto p = ro->page(2);
        ASSERT_TRUE(p.has_value());
        ASSERT_EQ(p->turns.size(), 1U);
        EXPECT_EQ(p->turns[0].frames.size(), 2U);
    }
    auto t = Transcript::open(path);
    ASSERT_TRUE(t.has_value());
    ASSERT_TRUE(t->append(*prompt(2)).has_value());
    auto again = Transcript::open(path, {.read_only = true});
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->frame_count(), 3U);
}

} // namespace
