// The subcommands of the `sluice` binary: each adds itself to the CLI and runs when chosen.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace sluice::app {

/// Records the action to run when `sub` is the chosen subcommand.
void on_selected(CLI::App* sub, std::function<int()> action);

/// Runs the action of the chosen subcommand; returns the process exit status.
int run_selected(const CLI::App& app);

/// `sluice serve`: the hub.
void add_serve_command(CLI::App& app);

/// `sluice transcript window|turns|page|index`: offline work on JSONL transcripts.
void add_transcript_command(CLI::App& app);

/// `sluice run`: one turn, written to stdout as stream-json.
void add_run_command(CLI::App& app);

/// `sluice seats|new|send|tail|cancel|stats`: clients of a running hub.
void add_client_commands(CLI::App& app);

/// `sluice token new|list|revoke`: viewer tokens in the hub's data dir.
void add_token_command(CLI::App& app);

/// `sluice config show` and `sluice data move`: the hub's settings and data dir.
void add_config_commands(CLI::App& app);

/// `sluice service install|uninstall`: the hub as a systemd service.
void add_service_command(CLI::App& app);

/// `sluice hook claude EVENT` and `sluice hooks install|uninstall|status`: Claude Code's hooks.
void add_hooks_commands(CLI::App& app);

} // namespace sluice::app
