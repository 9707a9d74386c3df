// End to end: the real `sluice transcript …` binary on fixture transcripts and bad inputs.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/conversation/transcript.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using sluice::test::TempDir;

struct Run {
    int status{};
    std::string out;
    std::string err;
};

using sluice::test::slurp;

// Runs the binary with `args` (already shell-quoted), stdout and stderr to files (not a TTY).
Run sluice_cli(const std::string& args) {
    TempDir dir;
    const std::string cmd = std::string("'") + SLUICE_BINARY + "' " + args + " >'" + dir.file("out")
                            + "' 2>'" + dir.file("err") + "' </dev/null";
    const int raw = std::system(cmd.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(dir.file("out")), slurp(dir.file("err"))};
}

std::string q(const std::string& s) {
    return "'" + s + "'";
}

boost::json::object json_of(const Run& r) {
    boost::system::error_code ec;
    auto v = boost::json::parse(r.out, ec);
    EXPECT_FALSE(ec) << r.out << r.err;
    return ec || !v.is_object() ? boost::json::object{} : v.as_object();
}

class TranscriptCli : public ::testing::TestWithParam<sluice::test::FixtureTranscript> {};

TEST_P(TranscriptCli, WindowAndTurnsAgreeWithTheFixture) {
    const auto& fx = GetParam();
    const auto path = sluice::test::fixture_path(fx.file);
    sluice::HeldFrames held;
    std::vector<std::uint64_t> expected;
    sluice::TurnScan scan;
    std::uint64_t bytes = 0;
    for (const auto& r : sluice::test::parse_fixture(fx)) {
        if (r.frame && r.frame->is_frame()) {
            for (auto line : fx.opening_lines) {
                if (line == r.line) {
                    expected.push_back(held.size());
                }
            }
            held.push_back({r.frame, scan.opens_turn(*r.frame)});
            bytes += r.frame->wire_bytes();
        }
    }
    auto turns = sluice_cli("transcript turns " + q(path) + " --json");
    ASSERT_EQ(turns.status, 0) << turns.err;
    EXPECT_EQ(turns.err, ""); // piped: no progress bar
    auto t = json_of(turns);
    EXPECT_EQ(t["total_frames"].to_number<std::uint64_t>(), held.size());
    std::vector<std::uint64_t> got;
    for (const auto& v : t["openings"].as_array()) {
        got.push_back(v.to_number<std::uint64_t>());
    }
    EXPECT_EQ(got, expected);

    auto win = sluice_cli("transcript window " + q(path) + " --cap 8 --cap-bytes 5000 --json");
    ASSERT_EQ(win.status, 0) << win.err;
    auto w = json_of(win);
    const auto b = sluice::Budget::scaled(8, 5000);
    const std::size_t first = b.past_ceiling(held.size(), bytes) ? sluice::cut_point(held, b) : 0;
    std::uint64_t kept = 0;
    std::uint64_t turns_kept = 0;
    for (std::size_t i = first; i < held.size(); ++i) {
        kept += held[i].frame->wire_bytes();
        turns_kept += held[i].opens ? 1U : 0U;
    }
    EXPECT_EQ(w["total_frames"].to_number<std::uint64_t>(), held.size());
    EXPECT_EQ(w["first"].to_number<std::uint64_t>(), first);
    EXPECT_EQ(w["frames"].to_number<std::uint64_t>(), held.size() - first);
    EXPECT_EQ(w["bytes"].to_number<std::uint64_t>(), kept);
    EXPECT_EQ(w["turns"].to_number<std::uint64_t>(), turns_kept);
    EXPECT_EQ(w["first_opens_turn"].as_bool(), first < held.size() && held[first].opens);
    EXPECT_EQ(w["shed"].at("frames").to_number<std::uint64_t>(), first);
}

std::string fixture_name(const ::testing::TestParamInfo<sluice::test::FixtureTranscript>& p) {
    return "T" + std::to_string(p.index);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures,
    TranscriptCli,
    ::testing::ValuesIn(sluice::test::fixture_transcripts()),
    fixture_name);

TEST(TranscriptCliPage, WalksBackToTheStartWithoutGaps) {
    const auto& fx = sluice::test::fixture_transcripts()[17]; // happy-cli, 11 turns, 2 MB
    const auto path = sluice::test::fixture_path(fx.file);
    std::string before;
    std::uint64_t expect_end = 0;
    bool first_page = true;
    int pages = 0;
    for (;;) {
        auto r = sluice_cli("transcript page " + q(path) + " --turns 4 --json" + before);
        ASSERT_EQ(r.status, 0) << r.err;
        auto p = json_of(r);
        const auto& turns = p["turns"].as_array();
        ASSERT_FALSE(turns.empty());
        ASSERT_LE(turns.size(), 4U);
        std::uint64_t pos = turns.front().at("first").to_number<std::uint64_t>();
        for (const auto& t : turns) {
            ASSERT_EQ(t.at("first").to_number<std::uint64_t>(), pos);
            pos += t.at("frames").as_array().size();
        }
        if (!first_page) {
            ASSERT_EQ(pos, expect_end);
        }
        first_page = false;
        ++pages;
        if (p["cursor"].is_null()) {
            ASSERT_EQ(turns.front().at("first").to_number<std::uint64_t>(), 0U);
            break;
        }
        expect_end = p["cursor"].to_number<std::uint64_t>();
        before = " --before " + std::to_string(expect_end);
    }
    EXPECT_GE(pages, 3);
}

TEST(TranscriptCliIndex, AnIndexedCopyGivesTheSameWindow) {
    TempDir dir;
    const auto& fx = sluice::test::fixture_transcripts()[7];
    const auto copy = dir.file("copy.jsonl");
    std::filesystem::copy_file(sluice::test::fixture_path(fx.file), copy);
    auto plain = sluice_cli("transcript window " + q(copy) + " --cap 10 --json");
    auto idx = sluice_cli("transcript index " + q(copy) + " --json");
    ASSERT_EQ(idx.status, 0) << idx.err;
    EXPECT_TRUE(std::filesystem::exists(sluice::Transcript::index_path(copy)));
    auto indexed = sluice_cli("transcript window " + q(copy) + " --cap 10 --json");
    EXPECT_EQ(plain.out, indexed.out);
}

// Bad inputs: one line on stderr naming the file (and line), exit status 2, never a crash;
// a bad line inside a transcript is such an error only with --strict.
void expect_bad_input(const Run& r, const std::string& names) {
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(TranscriptCliErrors, BadInputsGiveOneLineAndStatusTwo) {
    TempDir dir;
    for (const char* sub : {"window", "turns", "page"}) {
        const std::string s = std::string("transcript ") + sub + " ";
        expect_bad_input(sluice_cli(s + q(dir.file("missing.jsonl")) + " --json"), "missing.jsonl");
        expect_bad_input(sluice_cli(s + q(dir.path()) + " --json"), dir.path());

        const auto bin = dir.file("blob.bin");
        sluice::test::write_file(
            bin,
            std::string(
                "\x7f"
                "ELF\0\0\x01\n\x02\x03\n",
                12));
        expect_bad_input(sluice_cli(s + q(bin) + " --json"), "blob.bin:1");

        const auto bad = dir.file("bad.jsonl");
        sluice::test::write_file(
            bad,
            "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n"
            "{\"type\":\"assistant\", oops}\n"
            "{\"type\":\"assistant\",\"message\":{}}\n");
        expect_bad_input(sluice_cli(s + q(bad) + " --json --strict"), "bad.jsonl:2");
        // Without --strict the bad line is reported with its file and line, and the rest read.
        const auto lenient = sluice_cli(s + q(bad) + " --json");
        EXPECT_EQ(lenient.status, 0) << lenient.err;
        EXPECT_NE(lenient.err.find("bad.jsonl:2: skipped"), std::string::npos) << lenient.err;
        EXPECT_FALSE(lenient.out.empty());
    }
}

TEST(TranscriptCliErrors, IndexOfAMissingFileCreatesNothing) {
    TempDir dir;
    const auto missing = dir.file("missing.jsonl");
    for (const char* json : {"", " --json"}) {
        expect_bad_input(
            sluice_cli("transcript index " + q(missing) + json), "missing.jsonl: no such file");
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "neither the file nor its index";
    expect_bad_input(sluice_cli("transcript index " + q(dir.path()) + " --json"), dir.path());
}

} // namespace
