// Test support for sluice::conversation: the fixture transcripts and their expected turns.
#include "unit/conversation/fixtures.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace sluice::test {

const std::vector<FixtureTranscript>& fixture_transcripts() {
    // Openings read off each file by hand (see the fixtures README §6.4 for the rule). The README's
    // own counter also counts three malformed edge_cases rows (no `content`, `message` a string,
    // content a list of bare strings) as prompts; the scan answers "no turn when in doubt".
    static const std::vector<FixtureTranscript> all = {
        {"alfredjeanlab_claudeless/"
         "tests_fixtures_v2.1.29_compact-command.projects_-private-var-folders-t5-"
         "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a."
         "jsonl",
         {1, 5, 13, 17},
         4},
        {"alfredjeanlab_claudeless/"
         "tests_fixtures_v2.1.29_edit-permission-dialog.projects_-private-var-folders-t5-"
         "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-caLMT9_c2fc3a3f-66d5-4c87-9f78-1a31dd719471."
         "jsonl",
         {1, 10, 21},
         3},
        {"alfredjeanlab_claudeless/"
         "tests_fixtures_v2.1.29_hook-stop.projects_-private-var-folders-t5-"
         "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-lvcsb6_d266fdf5-b6a3-46aa-8627-920959a0109a."
         "jsonl",
         {1, 7, 18},
         3},
        {"charlieyou_claude-agent-sdk-gleam/test_fixtures_golden_basic_query.ndjson", {}, 0},
        {"d-kimuson_claude-code-viewer/"
         "mock-global-claude-dir_projects_sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b."
         "jsonl",
         {1, 433},
         2},
        {"iansherr_claude-code-log/test_test_data_edge_cases.jsonl", {0, 2, 6, 11}, 7},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-Users-dain-workspace-JSSoundRecorder_7acd37a8-2745-4b58-"
         "a8a9-46164b22ad9e.jsonl",
         {2, 46, 58, 63, 98, 168},
         6},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-Users-dain-workspace-claude-code-log-sample_0d3a8e6f-290f-"
         "4105-a327-a2496e5e2a83.jsonl",
         {0, 15, 20, 45, 62, 64, 66},
         7},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-Users-dain-workspace-claude-code-log-sample_fe869ecb-c176-"
         "478f-9734-7e4b8ef12cff.jsonl",
         {15, 47, 109},
         3},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-experiments-ideas_03eb5929-52b3-4b13-ada3-b93ae35806b8."
         "jsonl",
         {2, 17, 24, 31, 37, 44, 51, 59},
         8},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1."
         "jsonl",
         {4, 116, 178},
         3},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_"
         "subagents_agent-a36efb2a1231c41e2.jsonl",
         {},
         0},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_"
         "subagents_agent-aef063ba534d73153.jsonl",
         {},
         0},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-src-deep-manifest_a7da6a22-facc-4fcd-8bab-f83c87862004."
         "jsonl",
         {4, 8, 11, 44, 67, 74, 228, 249, 313},
         9},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-src-deep-manifest_agent-c8d9b115.jsonl",
         {},
         0},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-src-experiments-claude_p_29ccd257-68b1-427f-ae5f-"
         "6524b7cb6f20.jsonl",
         {2},
         1},
        {"iansherr_claude-code-log/"
         "test_test_data_real_projects_-src-experiments-claude_p_29ccd257-68b1-427f-ae5f-"
         "6524b7cb6f20_subagents_agent-a2271d1.jsonl",
         {},
         0},
        {"slopus_happy-cli/"
         "explore-claude-cli_v1-real-sessions-by-kirill-from-handy-cli_example-sessions_400429ba-"
         "c1e1-4ef5-a7ec-fe40608df53b.jsonl.first801lines.jsonl",
         {0, 82, 269, 271, 443, 528, 726, 728, 730, 757, 783},
         11},
        {"slopus_happy-cli/"
         "src_claude_utils___fixtures___permission-prompt-aborted-with-interrupt.jsonl",
         {0},
         1},
    };
    return all;
}

void PrintTo(const FixtureTranscript& t, std::ostream* os) {
    *os << t.file;
}

std::string fixture_path(const std::string& file) {
    return std::string(SLUICE_FIXTURES_DIR) + "/" + file;
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        lines.push_back(line);
    }
    return lines;
}

std::vector<FixtureRow> parse_fixture(const FixtureTranscript& t) {
    std::vector<FixtureRow> rows;
    const auto lines = read_lines(fixture_path(t.file));
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].empty()) {
            continue;
        }
        auto f = Frame::parse(lines[i]);
        rows.push_back({i, f ? *f : nullptr});
    }
    return rows;
}

TempDir::TempDir() {
    std::string tmpl = "/tmp/sluice-conv-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

} // namespace sluice::test
