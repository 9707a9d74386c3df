// `sluice run`: one turn to stdout as stream-json (issue 4 fills this in).
#include "commands.hpp"

namespace sluice::app {

void add_run_command(CLI::App& /*app*/) {}

} // namespace sluice::app
