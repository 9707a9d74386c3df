// process_figures (process_stats.hpp): /proc/self/{statm,stat,fd} and /proc/stat's btime.
#include "process_stats.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace sluice::server {

namespace {

// Seconds since the epoch at which the machine booted (/proc/stat's `btime` line).
std::optional<double> boot_time() {
    std::ifstream in("/proc/stat");
    std::string key;
    while (in >> key) {
        if (key == "btime") {
            double t = 0;
            if (in >> t) {
                return t;
            }
            return std::nullopt;
        }
        in.ignore(1 << 20, '\n');
    }
    return std::nullopt;
}

} // namespace

ProcessFigures process_figures() {
    ProcessFigures f;
    const long page = ::sysconf(_SC_PAGESIZE);
    const long ticks = ::sysconf(_SC_CLK_TCK);
    {
        std::ifstream in("/proc/self/statm");
        std::uint64_t size = 0;
        std::uint64_t resident = 0;
        if (page > 0 && (in >> size >> resident)) {
            f.virtual_bytes = size * static_cast<std::uint64_t>(page);
            f.resident_bytes = resident * static_cast<std::uint64_t>(page);
        }
    }
    {
        std::error_code ec;
        std::uint64_t n = 0;
        for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
             it.increment(ec)) {
            ++n;
        }
        if (!ec) {
            f.open_fds = n > 0 ? n - 1 : 0; // the iterator's own descriptor is not the hub's
        }
    }
    if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        f.max_fds = rl.rlim_cur;
    }
    {
        // /proc/self/stat: "pid (comm) state ..." where comm may hold spaces and parentheses:
        // the fields after the last ')' are fixed; utime, stime are fields 14, 15 and
        // starttime field 22 (1-based, counting pid as 1).
        std::ifstream in("/proc/self/stat");
        const std::string line(
            (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = line.rfind(')');
        if (close != std::string::npos && ticks > 0) {
            std::istringstream rest(line.substr(close + 1));
            std::string field;
            double utime = 0;
            double stime = 0;
            double start = 0;
            bool ok = true;
            for (int i = 3; i <= 22 && ok; ++i) { // field 3 (state) is the first after ')'
                ok = static_cast<bool>(rest >> field);
                if (!ok) {
                    break;
                }
                if (i == 14) {
                    utime = std::stod(field);
                } else if (i == 15) {
                    stime = std::stod(field);
                } else if (i == 22) {
                    start = std::stod(field);
                }
            }
            if (ok) {
                const auto hz = static_cast<double>(ticks);
                f.cpu_seconds = (utime + stime) / hz;
                if (const auto boot = boot_time()) {
                    f.start_time_seconds = *boot + start / hz;
                }
            }
        }
    }
    return f;
}

} // namespace sluice::server
