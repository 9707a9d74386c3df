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
        sluice::app::add_hooks_commands(app);
        // After the subcommands: a subcommand made later would inherit it (CLI11).
        app.footer(
            "Exit status: 0 done; 1 failed (the hub's refusal, an unreachable hub: said on\n"
            "stderr); 2 bad usage. `sluice send` also: 3 stopped at a permission prompt (answer\n"
            "it with `sluice approve SEAT REQUEST`), 130 stopped or detached with Ctrl-C; see\n"
            "`sluice send --help`.");
        // A first word that is no subcommand: said so (CLI11 would only say it was not expected).
        if (argc > 1 && argv[1][0] != '-') {
            const std::string word = argv[1];
            const auto known =
                app.get_subcommands([&word](const CLI::App* sub) { return sub->check_name(word); });
            if (known.empty()) {
                std::fprintf(
                    stderr,
                    "sluice: unknown subcommand '%s' (sluice --help lists them)\n",
                    word.c_str());
                return 2;
            }
        }
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
