// AcpAgent settings: an agent that speaks the Agent Client Protocol (ACP) on stdio, hosted.
#pragma once

#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime {

/// How to host an ACP agent (`gemini --acp`, `qwen --acp`, `opencode acp`). The command line
/// comes from sluice's configuration (`serve --acp-agent`), never from request data; the process
/// gets sluice's environment plus `env`.
///
/// Protocol (ACP version 1, JSON-RPC 2.0 one message a line): the process starts with the first
/// turn; `initialize` (sluice offers `fs/read_text_file` and `fs/write_text_file`, no
/// terminals); `session/new` with `working_dir`, or `session/load` of `session_id` (or of the
/// session it made before, when a process starts again) when the agent can load sessions; each
/// prompt a `session/prompt`, over when its answer (a stop reason) comes; cancel a
/// `session/cancel` notification (every open permission request answered `cancelled`; the
/// process is ended when no answer follows within `cancel_grace`). `session/update`
/// notifications become frames and previews (acp_updates.hpp); `session/request_permission`
/// becomes a PermissionRequest, answered with the option the answer picks. The client methods:
/// `fs/read_text_file` and `fs/write_text_file` are served for files inside `working_dir` only
/// (symbolic links resolved), on one file thread all ACP agents share (never on `ex`); every
/// other request is refused (-32601). A line that is not JSON,
/// a refused start or the process's exit fails the turn with the reason; the next turn starts a
/// new process loading the session.
struct AcpAgentConfig {
    std::vector<std::string> argv; ///< the agent's command line, split (acp::split_command)
    std::string working_dir{"."};  ///< the process's and the session's working directory
    std::string session_id;        ///< a session to load from the first turn ("" : a new one)
    std::vector<std::string> env;  ///< "NAME=value" entries on top of sluice's environment
    std::size_t max_line_bytes{32 * 1024 * 1024};     ///< a longer line fails the turn
    std::size_t max_file_bytes{16 * 1024 * 1024};     ///< fs/read_text_file serves at most this
    std::chrono::milliseconds start_timeout{60'000};  ///< initialize and the session, answered
    std::chrono::milliseconds cancel_grace{5'000};    ///< wait this long for the cancelled answer
    std::chrono::milliseconds terminate_grace{2'000}; ///< SIGTERM → SIGKILL
};

/// An agent speaking ACP hosted as a child process (see AcpAgentConfig): kind "acp".
/// @param ex as for make_builtin_agent (agent.hpp).
[[nodiscard]] std::unique_ptr<Agent>
make_acp_agent(const boost::asio::any_io_executor& ex, AcpAgentConfig config);

namespace acp {

/// Splits a command line into its words: blanks separate them; single or double quotes keep
/// blanks inside one word (and are removed); nothing else is special (no variables, globs or
/// escapes: the line is run, not interpreted by a shell). @return none, with `error` set, for an
/// empty line or an unclosed quote.
[[nodiscard]] std::optional<std::vector<std::string>>
split_command(std::string_view line, std::string& error);

} // namespace acp

} // namespace sluice::runtime
