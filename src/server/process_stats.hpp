// The process's own figures for /metrics (`process_*`, Prometheus' standard names), from /proc.
#pragma once

#include <cstdint>
#include <optional>

namespace sluice::server {

/// What /proc says about this process now; a figure /proc could not give is empty.
struct ProcessFigures {
    std::optional<std::uint64_t> resident_bytes; ///< resident set (statm's second field)
    std::optional<std::uint64_t> virtual_bytes;  ///< virtual size (statm's first field)
    std::optional<std::uint64_t> open_fds;       ///< entries of /proc/self/fd
    std::optional<std::uint64_t> max_fds;        ///< RLIMIT_NOFILE's soft limit
    std::optional<double> start_time_seconds;    ///< since the Unix epoch
    std::optional<double> cpu_seconds;           ///< user + system time
};

/// Reads them (a few small /proc files; safe from any thread).
ProcessFigures process_figures();

} // namespace sluice::server
