// Test support for the `--claude-projects` e2e tests: a tree of real Claude Code session files
// built in a temp dir from ../shared/fixtures, and the hub calls the tests share.
#pragma once

#include "support/files.hpp"
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::test::claude_tree {

namespace json = boost::json;
namespace fs = std::filesystem;

// Session files of the tree: fixture → (project folder, session id).
struct Session {
    const char* fixture;
    const char* project;
    const char* id;
};

inline constexpr Session SUMMARY_SESSION{
    "iansherr_claude-code-log/"
    "test_test_data_real_projects_-Users-dain-workspace-claude-code-log-sample_fe869ecb-c176-478f-"
    "9734-7e4b8ef12cff.jsonl",
    "-Users-dain-workspace-claude-code-log-sample",
    "fe869ecb-c176-478f-9734-7e4b8ef12cff"};
inline constexpr Session COMPACT_SESSION{
    "alfredjeanlab_claudeless/"
    "tests_fixtures_v2.1.29_compact-command.projects_-private-var-folders-t5-"
    "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl",
    "-private-var-folders-capture",
    "8aa54c1d-5030-4491-be42-e0c416424b8a"};
inline constexpr Session SUBAGENT_SESSION{
    "iansherr_claude-code-log/"
    "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1."
    "jsonl",
    "-experiments-worktrees",
    "ef958aa1-0e93-49f0-bb71-150f63befcd1"};
inline constexpr const char* SUBAGENT_FILE =
    "iansherr_claude-code-log/"
    "test_test_data_real_projects_-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_"
    "subagents_agent-a36efb2a1231c41e2.jsonl";
inline constexpr const char* OLD_AGENT_FILE =
    "iansherr_claude-code-log/test_test_data_real_projects_-src-deep-manifest_agent-c8d9b115.jsonl";

inline void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// Every real Claude Code session of the fixtures as a projects tree: fixture → its path under
// the projects folder (a session file named by its id under a project folder; its sub-agents'
// files under `<id>/subagents/`, as Claude Code lays them out). The usage and search oracles'
// tree.
inline const std::vector<std::pair<std::string, std::string>>& fixture_tree() {
    static const std::string LOG = "iansherr_claude-code-log/test_test_data_real_projects_";
    static const std::string CLAUDELESS = "alfredjeanlab_claudeless/tests_fixtures_v2.1.29_";
    static const std::vector<std::pair<std::string, std::string>> files{
        {LOG + "-Users-dain-workspace-JSSoundRecorder_7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
         "-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"},
        {LOG
             + "-Users-dain-workspace-claude-code-log-sample_fe869ecb-c176-478f-9734-7e4b8ef12cff."
               "jsonl",
         "-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"},
        {LOG
             + "-Users-dain-workspace-claude-code-log-sample_0d3a8e6f-290f-4105-a327-a2496e5e2a83."
               "jsonl",
         "-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"},
        {LOG + "-src-deep-manifest_a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
         "-src-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"},
        {LOG + "-src-experiments-claude_p_29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
         "-src-experiments-claude-p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"},
        {LOG
             + "-src-experiments-claude_p_29ccd257-68b1-427f-ae5f-6524b7cb6f20_subagents_agent-"
               "a2271d1.jsonl",
         "-src-experiments-claude-p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/"
         "agent-a2271d1.jsonl"},
        {LOG + "-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
         "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"},
        {LOG
             + "-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_subagents_agent-"
               "a36efb2a1231c41e2.jsonl",
         "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/"
         "agent-a36efb2a1231c41e2.jsonl"},
        {LOG
             + "-experiments-worktrees_ef958aa1-0e93-49f0-bb71-150f63befcd1_subagents_agent-"
               "aef063ba534d73153.jsonl",
         "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/"
         "agent-aef063ba534d73153.jsonl"},
        {LOG + "-experiments-ideas_03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
         "-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"},
        {CLAUDELESS
             + "edit-permission-dialog.projects_-private-var-folders-t5-"
               "6tq8cxtj20z035rv8hsnzwvh0000gn-T-capture-caLMT9_c2fc3a3f-66d5-4c87-9f78-"
               "1a31dd719471.jsonl",
         "-capture-caLMT9/c2fc3a3f-66d5-4c87-9f78-1a31dd719471.jsonl"},
        {CLAUDELESS
             + "hook-stop.projects_-private-var-folders-t5-6tq8cxtj20z035rv8hsnzwvh0000gn-T-"
               "capture-lvcsb6_d266fdf5-b6a3-46aa-8627-920959a0109a.jsonl",
         "-capture-lvcsb6/d266fdf5-b6a3-46aa-8627-920959a0109a.jsonl"},
        {CLAUDELESS
             + "compact-command.projects_-private-var-folders-t5-6tq8cxtj20z035rv8hsnzwvh0000gn-T-"
               "capture-vyPJVq_8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl",
         "-capture-vyPJVq/8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl"},
        {"slopus_happy-cli/"
         "explore-claude-cli_v1-real-sessions-by-kirill-from-handy-cli_example-sessions_400429ba-"
         "c1e1-4ef5-a7ec-fe40608df53b.jsonl.first801lines.jsonl",
         "-happy/400429ba-c1e1-4ef5-a7ec-fe40608df53b.jsonl"},
        {"slopus_happy-cli/"
         "src_claude_utils___fixtures___permission-prompt-aborted-with-interrupt.jsonl",
         "-happy/permission-prompt-aborted.jsonl"},
        {"d-kimuson_claude-code-viewer/"
         "mock-global-claude-dir_projects_sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b."
         "jsonl",
         "sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"},
        {"iansherr_claude-code-log/test_test_data_edge_cases.jsonl", "-edge/edge-cases.jsonl"},
    };
    return files;
}

// Whether a fixture_tree() path is a sub-agent's file (not a session of its own).
inline bool is_subagent_path(const std::string& path) {
    return path.find("/subagents/") != std::string::npos;
}

// fixture_tree() copied under `projects`.
inline void build_fixture_tree(const fs::path& projects) {
    for (const auto& [fixture, path] : fixture_tree()) {
        put(projects / path, slurp(fixture_path(fixture)));
    }
}

inline fs::path session_path(const fs::path& dir, const Session& s) {
    return dir / s.project / (std::string(s.id) + ".jsonl");
}

// The tree: three sessions in three projects, a sub-agent file under one session and an
// old-layout `agent-*.jsonl` beside them (neither is a seat).
inline void build_tree(const fs::path& dir) {
    for (const auto* s : {&SUMMARY_SESSION, &COMPACT_SESSION, &SUBAGENT_SESSION}) {
        put(session_path(dir, *s), slurp(fixture_path(s->fixture)));
    }
    put(dir / SUBAGENT_SESSION.project / SUBAGENT_SESSION.id / "subagents"
            / "agent-a36efb2a1231c41e2.jsonl",
        slurp(fixture_path(SUBAGENT_FILE)));
    put(dir / SUMMARY_SESSION.project / "agent-c8d9b115.jsonl",
        slurp(fixture_path(OLD_AGENT_FILE)));
}

inline std::string seat_id(const Session& s) {
    return std::string("c-") + s.id;
}

inline json::object seat_of(const SluiceProcess& hub, const std::string& id) {
    auto r = http("GET", hub.base() + "/v1/seats/" + id);
    EXPECT_EQ(r.status, 200U) << r.body;
    return r.json.is_object() ? r.json.as_object() : json::object{};
}

inline std::map<std::string, json::object> seats_of(const SluiceProcess& hub) {
    auto r = http("GET", hub.base() + "/v1/seats");
    EXPECT_EQ(r.status, 200U) << r.body;
    std::map<std::string, json::object> out;
    for (const auto& s : r.json.at("seats").as_array()) {
        out[std::string(s.at("id").as_string())] = s.as_object();
    }
    return out;
}

inline std::vector<std::string> serve_args(const TempDir& data, const fs::path& dir) {
    return {
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        data.path(),
        "--claude-projects",
        dir.string()};
}

// Every file and folder under `dir`: path → (size, mtime, content) — equal before and after
// means nothing was written, created, removed or touched.
inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        struct stat st {};

        ::lstat(e.path().c_str(), &st);
        std::string v = std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":"
                        + std::to_string(st.st_mtim.tv_sec) + "."
                        + std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
        if (e.is_regular_file()) {
            v += ":" + std::to_string(std::hash<std::string>{}(slurp(e.path())));
        }
        out[e.path().string()] = v;
    }
    return out;
}

} // namespace sluice::test::claude_tree
