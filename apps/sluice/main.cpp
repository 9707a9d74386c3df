// sluice: entry point; each subcommand lives in its own file and registers itself here.
#include "commands.hpp"
#include "sluice/core/version.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
    // Everything inside one try: building the CLI allocates, and no exception may leave main.
    try {
        CLI::App app{"sluice: the streaming boundary for LLM agent sessions"};
        app.require_subcommand(1);
        app.set_version_flag(
            "--version",
            "sluice " + std::string{sluice::version()} + " (" + std::string{sluice::commit()}
                + ")");
        sluice::app::add_serve_command(app);
        sluice::app::add_transcript_command(app);
        sluice::app::add_run_command(app);
        sluice::app::add_client_commands(app);
        sluice::app::add_token_command(app);
        sluice::app::add_config_commands(app);
        sluice::app::add_service_command(app);
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            return app.exit(e) == 0 ? 0 : 2;
        }
        return sluice::app::run_selected(app);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sluice: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "sluice: unknown exception\n");
    }
    return 1;
}
