// The built-in tools: bash (a shell command in a working directory), read_file, and echo.
#pragma once

#include <sluice/runtime/tools/tool.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sluice::runtime {

/// Settings shared by the built-in tools.
struct ToolOptions {
    std::string working_dir{"."}; ///< where `bash` runs and `read_file` resolves relative paths
};

/// `bash`: runs `/bin/sh -c <command>` in the working directory, in its own process group,
/// stdin from /dev/null, stdout and stderr merged and streamed; the whole group is killed on
/// cancel or timeout. A non-zero exit status is an error result carrying the output.
[[nodiscard]] std::shared_ptr<Tool> make_bash_tool(ToolOptions options);

/// `read_file`: reads a regular file (path relative to the working directory, optional
/// `offset` and `limit` in bytes), never more than the run's `max_output` bytes.
[[nodiscard]] std::shared_ptr<Tool> make_read_file_tool(ToolOptions options);

/// `echo`: returns its `text` input. Harmless; the scripted provider's demo tool when no other
/// tool is enabled.
[[nodiscard]] std::shared_ptr<Tool> make_echo_tool();

/// Builds the named built-in tools ("bash", "read_file", "echo").
/// @throws std::invalid_argument on an unknown name.
[[nodiscard]] std::vector<std::shared_ptr<Tool>>
make_tools(const std::vector<std::string>& names, const ToolOptions& options);

/// Splits a comma-separated list ("bash,read_file") into names, dropping empty items.
[[nodiscard]] std::vector<std::string> split_tool_list(const std::string& list);

} // namespace sluice::runtime
