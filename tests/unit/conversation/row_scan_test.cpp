// RowScanner against Frame::parse, row by row and over whole files (the index and the openings).
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/core/error.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using sluice::FrameRole;
using sluice::RowKind;
using sluice::RowScanner;
using sluice::TurnFacts;

// Every JSONL transcript under `root`.
std::vector<std::string> jsonl_files(const std::string& root) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
        const auto ext = e.path().extension();
        if (e.is_regular_file() && (ext == ".jsonl" || ext == ".ndjson")) {
            out.push_back(e.path().string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The fuzzers' corpora of rows (transcript_line, stream_json), beside this tree's sources.
std::vector<std::string> corpus_files() {
    std::vector<std::string> out;
    const auto here = std::filesystem::path(__FILE__).parent_path() / "../../../fuzz/corpus";
    for (const auto& d : {here / "transcript_line", here / "stream_json"}) {
        if (!std::filesystem::is_directory(d)) {
            continue;
        }
        for (const auto& e : std::filesystem::directory_iterator(d)) {
            out.push_back(e.path().string());
        }
    }
    return out;
}

using sluice::test::slurp;

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
        auto nl = text.find('\n', at);
        if (nl == std::string::npos) {
            nl = text.size();
        }
        out.push_back(text.substr(at, nl - at));
        at = nl + 1;
    }
    return out;
}

std::string facts_text(std::string_view type, const TurnFacts& f) {
    std::string s = std::string(type) + " role=" + std::to_string(static_cast<int>(f.role))
                    + " sub=" + std::to_string(f.subagent) + " tool=" + std::to_string(f.tool_call)
                    + " skills=";
    for (const auto& k : f.skill_calls) {
        s += k + ",";
    }
    s += " results=";
    for (const auto& r : f.results_for) {
        s += r + ",";
    }
    return s;
}

struct Tally {
    std::size_t frames{}, not_frames{}, unsure{};
};

// The scanner never disagrees with Frame::parse: a frame has the same type and facts, a row that
// is not a frame is not one, and a row Frame::parse refuses is never taken.
void expect_agrees(RowScanner& rows, const std::string& row, Tally& tally, bool frames_taken) {
    std::string padded = row;
    padded.append(sluice::ROW_SCAN_PADDING, '\0');
    const std::string_view view(padded.data(), row.size());
    std::string type;
    TurnFacts facts;
    const RowKind kind = rows.scan(view, type, facts);
    auto f =
        row.empty()
            ? boost::system::result<sluice::FramePtr>(make_error_code(sluice::errc::bad_request))
            : sluice::Frame::parse(row);
    const auto snippet = row.substr(0, 200);
    const bool valid = rows.valid(view);
    EXPECT_EQ(valid, kind != RowKind::unsure) << snippet;
    if (valid) {
        boost::system::error_code ec;
        (void)boost::json::parse(row, ec);
        EXPECT_FALSE(ec) << "valid, but Boost.JSON refuses it: " << snippet;
    }
    if (kind == RowKind::unsure) {
        ++tally.unsure;
        if (frames_taken && f && (*f)->is_frame()) {
            ADD_FAILURE() << "a frame the scanner left to the full parse: " << snippet;
        }
        return;
    }
    if (kind == RowKind::not_frame) {
        ++tally.not_frames;
        // JSON that is not an object (bad_request), or an object that is not a frame.
        if (f) {
            EXPECT_FALSE((*f)->is_frame()) << snippet;
        } else {
            EXPECT_EQ(f.error(), make_error_code(sluice::errc::bad_request)) << snippet;
        }
        return;
    }
    ASSERT_TRUE(f.has_value()) << "taken, but Frame::parse refuses it: " << snippet;
    ++tally.frames;
    ASSERT_TRUE((*f)->is_frame()) << snippet;
    EXPECT_EQ(facts_text(type, facts), facts_text((*f)->type(), (*f)->facts())) << snippet;
}

TEST(RowScan, AgreesWithFrameOnEveryFixtureRow) {
    RowScanner rows;
    Tally tally;
    const auto files = jsonl_files(SLUICE_FIXTURES_DIR);
    ASSERT_GE(files.size(), 18U);
    for (const auto& file : files) {
        SCOPED_TRACE(file);
        for (const auto& line : split_lines(slurp(file))) {
            expect_agrees(rows, line, tally, true);
        }
    }
    EXPECT_GT(tally.frames, 1000U);
    EXPECT_GT(tally.not_frames, 10U);
}

TEST(RowScan, NeverTakesARowFrameParseRefuses) {
    std::vector<std::string> rows_in = {
        R"({"type":"user","message":{"content":"hi"},"type":"summary"})", // last duplicate counts
        R"({"type":"summary","type":"user","message":{"content":"hi"}})",
        R"({"type":"user","message":{"content":"a"},"message":{"content":"<x>"}})",
        R"({"type":"user","message":{"content":"<x>","content":"hi"}})",
        R"({"type":"user","isSidechain":true,"isSidechain":false,"message":{"content":"hi"}})",
        R"({"type":"user","message":{"content":[{"type":"text","text":"<a>","text":"hi"}]}})",
        R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a"}]}})",
        R"({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Skill",)"
        R"("id":1}]}})",
        R"({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Skill",)"
        R"("id":"s"}]}})",
        R"({"type":"system","subtype":"compact_boundary"})",
        R"({"type":"user","isCompactSummary":true,"message":{"content":"x"}})",
        R"({"type":"user","isMeta":true,"message":{"content":"x"}})",
        R"({"type":"user","parent_tool_use_id":"t","message":{"content":"x"}})",
        R"({"type":"user","parent_tool_use_id":"","message":{"content":"x"}})",
        R"({"type":"us\u0065r","message":{"content":"x"}})",
        R"({"type":1,"message":{"content":"x"}})",
        R"({"type":"user","message":"x"})",
        R"({"type":"user","message":{"content":[1,{"type":"text","text":"x"}]}})",
        R"({"type":"user","message":{"content":[{"type":"image"}]}})",
        R"({"type":"user","x":"\udc00"})",
        R"({"type":"user","x":"\ud800"})",
        R"({"type":"user","x":1e999})",
        R"({"type":"user","x":-1e999})",
        R"({"type":"user","x":123456789012345678901234567890})",
        R"({"type":"user","x":-0.0e-400})",
        R"({"type":"user"} x)",
        R"({"type":"user"}{"type":"user"})",
        R"({"type":"user",})",
        R"({"type":"user")",
        R"({"type":"user","x":tru})",
        R"({"type":"user","x":nul})",
        R"({"type":"user","x":01})",
        R"({"type":"user","x":"a	b"})",
        "{\"type\":\"user\",\"x\":\"\xff\"}",
        "{\"type\":\"user\",\"x\":\"\xed\xa0\x80\"}",
        "{\"type\":\"user\",\"x\":\"\xc0\xaf\"}",
        "{\"type\":\"user\"}\r",
        "  {\"type\":\"user\"}  ",
        "   ",
        "",
        "[1,2]",
        "\"user\"",
        "null",
        "{}",
    };
    for (int depth = 20; depth <= 40; ++depth) {
        std::string deep = R"({"type":"user","x":)";
        deep += std::string(static_cast<std::size_t>(depth), '[') + "1"
                + std::string(static_cast<std::size_t>(depth), ']') + "}";
        rows_in.push_back(deep);
    }
    for (const auto& file : corpus_files()) {
        for (const auto& line : split_lines(slurp(file))) {
            rows_in.push_back(line);
        }
    }
    RowScanner rows;
    Tally tally;
    for (const auto& row : rows_in) {
        expect_agrees(rows, row, tally, false);
    }
    EXPECT_GT(tally.unsure, 20U); // the refused rows were left to the full parse
    EXPECT_GT(tally.frames, 15U);
}

// What a whole-file scan gave before the row scanner: every line parsed by Frame::parse.
struct Reference {
    std::vector<std::array<std::uint64_t, 3>> checkpoints, openings; // pos, offset, line
    std::vector<std::uint64_t> bad_lines;                            // 1-based
    std::vector<std::string> bad_what;
    std::uint64_t frames{}, lines{};
};

Reference reference_scan(const std::string& text) {
    Reference r;
    sluice::TurnScan scan;
    std::uint64_t offset = 0;
    for (const auto& line : split_lines(text)) {
        if (!line.empty()) {
            auto f = sluice::Frame::parse(line);
            if (!f && f.error() != make_error_code(sluice::errc::bad_request)) {
                r.bad_lines.push_back(r.lines + 1);
                r.bad_what.push_back("not JSON (" + f.error().message() + ")");
            } else if (f && (*f)->is_frame()) {
                if (r.frames % sluice::TRANSCRIPT_CHECKPOINT_FRAMES == 0) {
                    r.checkpoints.push_back({r.frames, offset, r.lines});
                }
                if (scan.opens_turn(**f)) {
                    r.openings.push_back({r.frames, offset, r.lines});
                }
                ++r.frames;
            }
        }
        ++r.lines;
        offset += line.size() + 1;
    }
    return r;
}

// The index file the reference scan gives (the format Transcript::write_index writes).
std::string reference_index(const Reference& r, std::uint64_t end) {
    std::string out = "SLUICEIX";
    auto put = [&](std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
    put(1);
    for (const auto& c : r.checkpoints) {
        put(1);
        put(c[0]);
        put(c[1]);
        put(c[2]);
    }
    for (const auto& c : r.openings) {
        put(2);
        put(c[0]);
        put(c[1]);
        put(c[2]);
    }
    put(3);
    put(r.frames);
    put(end);
    put(r.lines);
    return out;
}

void expect_scans_match(const std::string& text, const std::string& name) {
    SCOPED_TRACE(name);
    sluice::test::TempDir dir;
    const auto path = dir.file("t.jsonl");
    sluice::test::write_file(path, text);
    const Reference ref = reference_scan(text);
    {
        auto t = sluice::Transcript::open(path, {.read_only = true});
        ASSERT_TRUE(t) << t.error().message();
        auto ops = t->openings();
        ASSERT_TRUE(ops);
        std::vector<std::uint64_t> want;
        for (const auto& o : ref.openings) {
            want.push_back(o[0]);
        }
        EXPECT_EQ(*ops, want);
    }
    auto t = sluice::Transcript::open(path);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_TRUE(t->build_index());
    EXPECT_EQ(t->frame_count(), ref.frames);
    EXPECT_EQ(t->line_count(), ref.lines);
    EXPECT_EQ(t->bad_lines_total(), ref.bad_lines.size());
    const auto kept = std::min(ref.bad_lines.size(), sluice::TRANSCRIPT_BAD_LINES_KEPT);
    ASSERT_EQ(t->bad_lines().size(), kept);
    for (std::size_t i = 0; i < kept; ++i) {
        EXPECT_EQ(t->bad_lines()[i].line, ref.bad_lines[i]);
        EXPECT_EQ(t->bad_lines()[i].what, ref.bad_what[i]);
    }
    EXPECT_EQ(slurp(sluice::Transcript::index_path(path)), reference_index(ref, text.size()));
    if (!ref.bad_lines.empty()) {
        auto s = sluice::Transcript::open(path, {.read_only = true, .strict = true});
        ASSERT_TRUE(s);
        EXPECT_FALSE(s->openings());
        ASSERT_TRUE(s->bad_line());
        EXPECT_EQ(s->bad_line()->line, ref.bad_lines.front());
        EXPECT_EQ(s->bad_line()->what, ref.bad_what.front());
    }
}

TEST(RowScan, WholeFileScansMatchTheFullParseOnEveryFixture) {
    std::size_t files = 0;
    for (const auto& file : jsonl_files(SLUICE_FIXTURES_DIR)) {
        auto text = slurp(file);
        if (!text.empty() && text.back() != '\n') {
            text += '\n';
        }
        expect_scans_match(text, file);
        ++files;
    }
    EXPECT_GE(files, 18U);
}

TEST(RowScan, WholeFileScansMatchTheFullParseOnDamagedLines) {
    // A fixture with damage spliced in every few lines: cut rows, garbage, rows deeper than
    // Boost.JSON takes, an infinity, lone surrogates, duplicate keys.
    const std::vector<std::string> damage = {
        R"({"type":"user","message":{"content":"cut off)",
        "not json at all",
        R"({"type":"user","x":)" + std::string(40, '[') + std::string(40, ']') + "}",
        R"({"type":"user","message":{"content":"1e999 is fine"},"x":1e999})",
        R"({"type":"user","message":{"content":"\udc00"}})",
        R"({"type":"assistant","type":"user","message":{"content":"dup"}})",
        "\xff\xfe",
        "   ",
    };
    for (const auto& fx : sluice::test::fixture_transcripts()) {
        const auto lines = sluice::test::read_lines(sluice::test::fixture_path(fx.file));
        std::string text;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            text += lines[i] + "\n";
            if (i % 3 == 1) {
                text += damage[i % damage.size()] + "\n";
            }
        }
        text += lines.empty() ? std::string("{}\n") : lines.back() + "\n";
        expect_scans_match(text, fx.file + " (damaged)");
    }
}

} // namespace
