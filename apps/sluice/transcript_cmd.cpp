// `sluice transcript …`: offline work on JSONL transcripts (issue 3 fills this in).
#include "commands.hpp"

namespace sluice::app {

void add_transcript_command(CLI::App& /*app*/) {}

} // namespace sluice::app
