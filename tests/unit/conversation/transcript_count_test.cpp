// Tests of a Transcript opened end-relative: numbered from its end, counted later, resolved.
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace {

using sluice::Budget;
using sluice::Frame;
using sluice::Transcript;
using sluice::TranscriptCount;
using sluice::TranscriptOptions;
using sluice::test::TempDir;

// A session file of `turns` turns (a prompt and four answers each) with rows that are not
// frames and one damaged line among the oldest; returns the frames' lines, oldest first.
std::vector<std::string> write_session(const std::string& path, int turns) {
    std::ofstream out(path, std::ios::binary);
    std::vector<std::string> frames;
    for (int t = 0; t < turns; ++t) {
        const auto n = std::to_string(t);
        frames.push_back(R"({"type":"user","message":{"content":"prompt )" + n + R"("}})");
        for (int a = 0; a < 4; ++a) {
            frames.push_back(
                R"({"type":"assistant","message":{"content":[{"type":"text","text":"answer )" + n
                + "." + std::to_string(a) + R"("}]}})");
        }
        for (auto it = frames.end() - 5; it != frames.end(); ++it) {
            out << *it << '\n';
        }
        if (t % 7 == 3) {
            out << R"({"type":"summary","summary":"not a frame"})" << '\n';
        }
        if (t == 5) {
            out << R"({"type":"user","message":{"content":"torn)" << '\n'; // not JSON: no frame
        }
    }
    return frames;
}

TranscriptOptions foreign(const TempDir& dir) {
    TranscriptOptions o;
    o.read_only = true;
    o.follow = true;
    o.end_relative = true;
    o.index_file = dir.file("index.sidx");
    return o;
}

// Every frame below `before`, by pages: position → its JSON. Fails on a gap or a repeat.
std::map<std::uint64_t, std::string> page_down(Transcript& t, std::uint64_t before) {
    std::map<std::uint64_t, std::string> out;
    std::optional<std::uint64_t> at = before;
    int pages = 0;
    while (at && ++pages < 1000) {
        auto p = t.page(*at, 3);
        EXPECT_TRUE(p.has_value());
        EXPECT_TRUE(!p || !p->turns.empty()) << "a cursor that led to an empty page";
        if (!p || p->turns.empty()) {
            break;
        }
        std::uint64_t expect = p->turns.front().first;
        for (const auto& turn : p->turns) {
            EXPECT_EQ(turn.first, expect);
            for (const auto& f : turn.frames) {
                EXPECT_TRUE(out.emplace(expect++, std::string(f->json())).second);
            }
        }
        EXPECT_EQ(expect, *at) << "a page ends where the one above starts";
        at = p->cursor;
    }
    return out;
}

std::string compact(const std::string& row) {
    return std::string((*Frame::parse(row))->json());
}

TEST(TranscriptEndRelative, PositionsFromTheEndStayTheSameOnceCounted) {
    TempDir dir;
    const auto path = dir.file("s.jsonl");
    const auto frames = write_session(path, 60); // 300 frames
    const auto budget = Budget::scaled(40, 1U << 20);

    auto t = Transcript::open(path, foreign(dir));
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(t->counted());
    auto w = t->load_window(budget);
    ASSERT_TRUE(w.has_value());
    EXPECT_FALSE(t->counted()) << "a window of 40 frames does not reach a 300-frame file's start";
    EXPECT_FALSE(std::filesystem::exists(dir.file("index.sidx"))) << "no index before the count";
    const auto first = w->first();

    // Paging below the window before the count: every frame, in order, down to the first.
    const auto before = page_down(*t, first);
    ASSERT_EQ(before.size() + (w->end() - first), frames.size());
    std::uint64_t lowest = before.begin()->first;
    for (std::size_t i = 0; i < before.size(); ++i) {
        EXPECT_EQ(before.at(lowest + i), compact(frames[i])) << i;
    }
    auto span = t->frame_span(lowest + 7);
    ASSERT_TRUE(span.has_value());
    EXPECT_EQ(compact(*t->read_bytes(span->first, span->second)), compact(frames[7]));

    auto c = t->start_count();
    ASSERT_TRUE(c.has_value());
    int steps = 0;
    for (;;) {
        auto done = c->step(1024); // many small steps, as the hub's writer takes them
        ASSERT_TRUE(done.has_value());
        ++steps;
        if (*done) {
            break;
        }
    }
    EXPECT_GT(steps, 5);
    ASSERT_TRUE(t->resolve(std::move(*c)).has_value());
    EXPECT_TRUE(t->counted());
    EXPECT_EQ(t->origin(), lowest) << "the count puts the file's first frame where paging did";
    EXPECT_EQ(page_down(*t, first), before) << "the same positions name the same frames";
    span = t->frame_span(lowest + 7);
    ASSERT_TRUE(span.has_value());
    EXPECT_EQ(compact(*t->read_bytes(span->first, span->second)), compact(frames[7]));

    // Kept: opened again with its index, the numbering is the same.
    auto again = Transcript::open(path, foreign(dir));
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(again->index_was_valid());
    EXPECT_EQ(again->origin(), lowest);
    EXPECT_EQ(again->frame_count(), t->frame_count());
    EXPECT_EQ(page_down(*again, first), before);
    auto w2 = again->load_window(budget);
    ASSERT_TRUE(w2.has_value());
    EXPECT_EQ(w2->first(), first);
}

TEST(TranscriptEndRelative, AFileTheWindowReadsWholeIsNumberedFromZero) {
    TempDir dir;
    const auto path = dir.file("s.jsonl");
    const auto frames = write_session(path, 6);
    auto t = Transcript::open(path, foreign(dir));
    ASSERT_TRUE(t.has_value());
    auto w = t->load_window(Budget::scaled(400, 1U << 20));
    ASSERT_TRUE(w.has_value());
    EXPECT_TRUE(t->counted());
    EXPECT_EQ(w->first(), 0U);
    EXPECT_EQ(t->frame_count(), frames.size());
    EXPECT_TRUE(std::filesystem::exists(dir.file("index.sidx")));
    ASSERT_EQ(t->bad_lines().size(), 1U);
    EXPECT_EQ(t->bad_lines().front().line, 6U * 5 + 1 + 1) << "1-based, from the file's start";
}

TEST(TranscriptEndRelative, ACountThatNumbersTheWindowOtherwiseIsAConflict) {
    TempDir dir;
    const auto path = dir.file("s.jsonl");
    write_session(path, 60);
    auto t = Transcript::open(path, foreign(dir));
    ASSERT_TRUE(t.has_value());
    ASSERT_TRUE(t->load_window(Budget::scaled(40, 1U << 20)).has_value());
    // Rewritten in place after the window was read: its newest frame is no frame any more.
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        const auto size = std::filesystem::file_size(path);
        f.seekg(0);
        std::string all(size, '\0');
        f.read(all.data(), static_cast<std::streamsize>(size));
        const auto at = all.rfind(R"("type":"assistant")");
        ASSERT_NE(at, std::string::npos);
        f.seekp(static_cast<std::streamoff>(at + 8));
        f << "assistanx";
    }
    auto c = t->start_count();
    ASSERT_TRUE(c.has_value());
    while (!*c->step(1U << 20)) {
    }
    auto r = t->resolve(std::move(*c));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), sluice::make_error_code(sluice::errc::conflict));
    EXPECT_FALSE(t->counted());
    EXPECT_FALSE(std::filesystem::exists(dir.file("index.sidx")));
}

} // namespace
