// Conformance of Transcript over every fixture transcript: counts, openings, windows, pages.
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/frame_ref.hpp>
#include <sluice/conversation/transcript.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using sluice::Budget;
using sluice::FramePtr;
using sluice::HeldFrame;
using sluice::Transcript;
using sluice::test::FixtureTranscript;

struct Reference {
    sluice::HeldFrames frames;           // every frame with its full-scan turn flag
    std::vector<std::uint64_t> openings; // expected, from the hand-read opening lines
};

Reference reference(const FixtureTranscript& fx) {
    Reference ref;
    sluice::TurnScan scan;
    for (const auto& r : sluice::test::parse_fixture(fx)) {
        if (!r.frame || !r.frame->is_frame()) {
            continue;
        }
        for (auto line : fx.opening_lines) {
            if (line == r.line) {
                ref.openings.push_back(ref.frames.size());
            }
        }
        // The turn flag from the whole frame; the window holds (and counts) the form it
        // serves: an oversize frame's reference form (frame_ref.hpp).
        const bool opens = scan.opens_turn(*r.frame);
        ref.frames.push_back({sluice::held_form(r.frame), opens});
    }
    return ref;
}

// The one cut applied to the whole conversation at once.
void expect_window_matches(const sluice::Window& w, const Reference& ref, const Budget& b) {
    auto held = ref.frames;
    std::size_t first = 0;
    std::uint64_t bytes = 0;
    for (const auto& h : held) {
        bytes += h.frame->wire_bytes();
    }
    if (b.past_ceiling(held.size(), bytes)) {
        first = sluice::cut_point(held, b);
    }
    ASSERT_EQ(w.first(), first);
    ASSERT_EQ(w.end(), held.size());
    for (std::size_t i = first; i < held.size(); ++i) {
        ASSERT_EQ(w.at(i)->json(), held[i].frame->json()) << i;
        ASSERT_EQ(w.opens_turn(i), held[i].opens) << i;
    }
}

const Budget BUDGETS[] = {
    Budget{},
    Budget::scaled(3, 1ULL << 30),
    Budget::scaled(20, 1ULL << 30),
    Budget::scaled(4000, 20000),
    Budget::scaled(4000, 200000),
    Budget::scaled(8, 5000),
};

class TranscriptFixture : public ::testing::TestWithParam<FixtureTranscript> {};

TEST_P(TranscriptFixture, CountsFramesAndFindsTheOpenings) {
    const auto ref = reference(GetParam());
    auto t = Transcript::open(sluice::test::fixture_path(GetParam().file), {.read_only = true});
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), ref.frames.size());
    auto ops = t->openings();
    ASSERT_TRUE(ops.has_value());
    EXPECT_EQ(*ops, ref.openings);
}

TEST_P(TranscriptFixture, AWindowFromTheEndIsTheOneCutOfTheWholeTranscript) {
    const auto ref = reference(GetParam());
    auto t = Transcript::open(sluice::test::fixture_path(GetParam().file), {.read_only = true});
    ASSERT_TRUE(t.has_value());
    for (const auto& b : BUDGETS) {
        auto w = t->load_window(b);
        ASSERT_TRUE(w.has_value());
        expect_window_matches(*w, ref, b);
    }
}

TEST_P(TranscriptFixture, AnIndexedCopyServesTheSameWindows) {
    const auto ref = reference(GetParam());
    sluice::test::TempDir dir;
    const auto copy = dir.file("copy.jsonl");
    std::filesystem::copy_file(sluice::test::fixture_path(GetParam().file), copy);
    {
        auto t = Transcript::open(copy);
        ASSERT_TRUE(t.has_value());
        ASSERT_TRUE(t->build_index().has_value());
    }
    auto t = Transcript::open(copy);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->frame_count(), ref.frames.size());
    for (const auto& b : BUDGETS) {
        auto w = t->load_window(b);
        ASSERT_TRUE(w.has_value());
        expect_window_matches(*w, ref, b);
    }
}

TEST_P(TranscriptFixture, PagesWalkBackWithoutGapsInTurnsOfTheFullScan) {
    const auto ref = reference(GetParam());
    auto t = Transcript::open(sluice::test::fixture_path(GetParam().file), {.read_only = true});
    ASSERT_TRUE(t.has_value());
    for (std::size_t turns : {std::size_t{1}, std::size_t{3}, sluice::SUBSCRIBE_TURNS}) {
        std::uint64_t cursor = ref.frames.size();
        while (cursor > 0) {
            auto p = t->page(cursor, turns, 300000);
            ASSERT_TRUE(p.has_value());
            ASSERT_FALSE(p->turns.empty());
            ASSERT_LE(p->turns.size(), turns);
            std::uint64_t pos = p->turns.front().first;
            for (std::size_t k = 0; k < p->turns.size(); ++k) {
                const auto& turn = p->turns[k];
                ASSERT_EQ(turn.first, pos);
                // every turn but possibly the oldest starts at an opening (or at frame 0)
                if (k > 0) {
                    ASSERT_TRUE(ref.frames[pos].opens || pos == 0) << pos;
                }
                for (const auto& f : turn.frames) {
                    ASSERT_EQ(f->json(), ref.frames[pos].frame->json());
                    if (f != turn.frames.front()) {
                        ASSERT_FALSE(ref.frames[pos].opens) << pos; // no opening inside a turn
                    }
                    ++pos;
                }
            }
            ASSERT_EQ(pos, cursor);
            const std::uint64_t next = p->cursor.value_or(0);
            ASSERT_EQ(next, p->turns.front().first);
            cursor = next;
        }
    }
}

std::string fixture_name(const ::testing::TestParamInfo<FixtureTranscript>& p) {
    return "T" + std::to_string(p.index);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures,
    TranscriptFixture,
    ::testing::ValuesIn(sluice::test::fixture_transcripts()),
    fixture_name);

} // namespace
