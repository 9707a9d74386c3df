// Test support for sluice::conversation: the fixture transcripts and their expected turns.
#pragma once

#include <sluice/conversation/frame.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace sluice::test {

/// One fixture transcript (JSONL) and the 0-based line numbers where a turn opens.
struct FixtureTranscript {
    std::string file;                       ///< path under SLUICE_FIXTURES_DIR
    std::vector<std::size_t> opening_lines; ///< lines (0-based) that open a turn
    std::size_t readme_turns{};             ///< turns per the fixtures README §4 stats
};

/// Prints a fixture by its file name (gtest parameter names and failure messages).
void PrintTo(const FixtureTranscript& t, std::ostream* os);

/// Every JSONL transcript in the fixtures, with its expected openings.
const std::vector<FixtureTranscript>& fixture_transcripts();

/// Absolute path of a fixture file.
std::string fixture_path(const std::string& file);

/// The lines of a file, without their newlines.
std::vector<std::string> read_lines(const std::string& path);

/// One parsed line of a fixture: its 0-based line number and frame (null if not an object).
struct FixtureRow {
    std::size_t line{}; ///< 0-based line number
    FramePtr frame;     ///< null for lines that are JSON but not objects
};

/// Parses every line of a fixture (all fixture lines are JSON).
std::vector<FixtureRow> parse_fixture(const FixtureTranscript& t);

/// A fresh directory under /tmp, removed with everything in it when this goes.
class TempDir {
public:
    TempDir();                                   ///< creates the directory
    ~TempDir();                                  ///< removes it
    TempDir(const TempDir&) = delete;            ///< owns the directory
    TempDir& operator=(const TempDir&) = delete; ///< owns the directory

    /// The directory.
    const std::string& path() const noexcept { return path_; }

    /// A path inside the directory.
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

/// Writes `text` to `path` (replacing it).
void write_file(const std::string& path, const std::string& text);

} // namespace sluice::test
