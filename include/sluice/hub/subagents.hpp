// The sub-agent transcripts of a Claude Code session file, and the Task tool call each answers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::hub {

/// One sub-agent transcript of a session.
struct Subagent {
    std::string agent_id;       ///< Claude Code's agent id (`agent-<id>.jsonl`)
    std::string tool_use_id;    ///< the Task (Agent) tool_use it answers; empty when not found
    std::string description;    ///< that tool_use's `input.description`
    std::uint64_t rows{};       ///< whole lines that are rows (JSON objects)
    bool live{};                ///< written in the last FOREIGN_LIVE_FOR
    std::filesystem::path file; ///< the sub-agent file (never written)
};

/// The sub-agents of `session_file` (`<project>/<session>.jsonl`): Claude Code's layout
/// `<project>/<session>/subagents/agent-*.jsonl`, the older `<project>/agent-*.jsonl` whose
/// first row names the session (`sessionId`), and the oldest, inline in the session file
/// (read_inline_subagent), ordered by agent id. Each is linked to the Task
/// (or Agent) tool_use of the session it answers: by the `toolUseResult.agentId` of the tool
/// result row, else (a sub-agent still running has no result yet) by its first prompt, which is
/// the tool_use's `input.prompt`.
///
/// Reads every sub-agent file, and of the session file only the lines that can hold a link
/// (a memchr/memmem pass; those lines alone are parsed): O(files) bytes, blocking.
/// @par Thread safety
/// Safe from any thread; writes nothing.
[[nodiscard]] std::vector<Subagent> list_subagents(const std::filesystem::path& session_file);

/// What a session file says of its sub-agents, kept between requests (`list_subagents` and
/// `read_inline_subagent` without reading the whole session file each time): the session file
/// and each sub-agent file are read on from where the last request stopped, only what was
/// appended since, and read again from their start when truncated, replaced (another inode at
/// the path) or rewritten (their head changed). Holds the Task calls and, per inline
/// sub-agent, where its rows are (not the rows): O(Task calls + sidechain rows) memory.
///
/// @par Thread safety
/// Safe from any thread (a mutex); blocking (the hub calls it on its writer).
class SubagentIndex {
public:
    /// The index of `session_file` (`<project>/<session>.jsonl`); reads nothing yet.
    explicit SubagentIndex(std::filesystem::path session_file);
    ~SubagentIndex();                                        ///< forgets what it read
    SubagentIndex(const SubagentIndex&) = delete;            ///< one per session file
    SubagentIndex& operator=(const SubagentIndex&) = delete; ///< one per session file

    /// As `list_subagents`, reading only what changed since the last call.
    [[nodiscard]] std::vector<Subagent> list();

    /// As `read_inline_subagent`, reading only what the session file gained since.
    [[nodiscard]] std::optional<std::vector<std::string>> inline_rows(std::string_view agent_id);

    /// The session file.
    [[nodiscard]] const std::filesystem::path& session_file() const noexcept { return file_; }

    /// Bytes of the session file read so far (a second request reads only what was appended).
    [[nodiscard]] std::uint64_t session_bytes_read() const;

private:
    struct State;
    std::filesystem::path file_;
    std::unique_ptr<State> state_;
};

/// The file of sub-agent `agent_id` of `session_file`, in either layout (list_subagents), or
/// nullopt when the session has no such sub-agent. Blocking (a stat, a head read).
[[nodiscard]] std::optional<std::filesystem::path>
find_subagent_file(const std::filesystem::path& session_file, std::string_view agent_id);

/// The rows (whole JSONL lines, oldest first) of an inline sub-agent of `session_file`: older
/// Claude Code wrote sub-agents into the session file itself, as `isSidechain` rows chained by
/// `parentUuid` from a parentless prompt; list_subagents names each `inline-<its first uuid>`.
/// @return nullopt when the session has no such chain. Blocking: reads the session file.
[[nodiscard]] std::optional<std::vector<std::string>>
read_inline_subagent(const std::filesystem::path& session_file, std::string_view agent_id);

/// Whether `agent_id` can name a sub-agent file (letters, digits, `-`, `_`; 1–64 bytes).
[[nodiscard]] bool valid_agent_id(std::string_view agent_id);

} // namespace sluice::hub
