// Private: what a Transcript is made of: its file, its numbering, its row reader, its turn scan.
#pragma once

#include "transcript_file.hpp"
#include "transcript_index.hpp"
#include "transcript_rows.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/conversation/turns.hpp>

#include <filesystem>
#include <optional>
#include <utility>

namespace sluice {

/// The parts a `Transcript` composes; each owns its share of the state.
struct Transcript::Parts {
    /// The parts of the file `f` opened with `o`, its numbering still empty.
    Parts(TranscriptOptions o, detail::TranscriptFile f)
        : options(std::move(o))
        , file(std::move(f))
        , index(options.format)
        , rows(file.path(), options.strict, options.format) {}

    TranscriptOptions options;     ///< as opened
    detail::TranscriptFile file;   ///< the bytes: descriptor, end, torn tail
    detail::TranscriptIndex index; ///< the numbering and the sidecar
    detail::RowReader rows;        ///< lines read as frames, and the bad lines found
    std::optional<TurnScan> scan;  ///< the turn scan at the file's end, once warmed

    /// Where the sidecar index lives.
    std::filesystem::path index_file() const {
        return options.index_file.empty() ? Transcript::index_path(file.path())
                                          : options.index_file;
    }

    /// Whether the sidecar is kept (writable, or read-only with an index file of its own).
    bool index_writable() const noexcept {
        return options.write_index && (!options.read_only || !options.index_file.empty());
    }
};

} // namespace sluice
