// `sluice transcript window|turns|page|index`: offline work on any JSONL transcript.
#include "commands.hpp"

#include <sluice/conversation/transcript.hpp>
#include <sluice/core/error.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace sluice::app {

namespace {

struct TranscriptArgs {
    std::string file;
    bool json{};
    std::optional<std::uint64_t> cap;
    std::optional<std::uint64_t> cap_bytes;
    std::optional<std::uint64_t> before;
    std::size_t turns{SUBSCRIBE_TURNS};
    bool strict{};     // fail at the first bad line instead of skipping it
    bool full_parse{}; // turns/index: every row parsed in full (the scan before the row scanner)
};

// Exit status for bad input (missing file, not a transcript): one line on stderr, then 2.
constexpr int BAD_INPUT = 2;

void end_progress();

int fail(const std::string& file, const std::string& what) {
    end_progress();
    std::fprintf(stderr, "sluice: %s: %s\n", file.c_str(), what.c_str());
    return BAD_INPUT;
}

bool progress_drawn = false; // NOLINT: one CLI run per process

// Draws a progress bar on stderr, only when it is a terminal.
void draw_progress(std::uint64_t done, std::uint64_t total) {
    if (total == 0) {
        return;
    }
    progress_drawn = true;
    constexpr int WIDTH = 40;
    const double f = static_cast<double>(done) / static_cast<double>(total);
    const int fill = static_cast<int>(f * WIDTH);
    std::fprintf(
        stderr,
        "\r[%-*s] %3d%% %.1f/%.1f GiB",
        WIDTH,
        std::string(static_cast<std::size_t>(fill), '#').c_str(),
        static_cast<int>(f * 100),
        static_cast<double>(done) / (1 << 30),
        static_cast<double>(total) / (1 << 30));
    if (done >= total) {
        std::fputc('\n', stderr);
    }
}

// A file whose first bytes hold a NUL is binary, not JSONL.
bool looks_binary(const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    std::array<char, 65536> buf{};
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    ::close(fd);
    return n > 0 && std::memchr(buf.data(), '\0', static_cast<std::size_t>(n)) != nullptr;
}

// Opens read-only (or not, for `index`), turning failures into the one-line error. `full_scan`:
// the caller scans the whole file next (turns, index), which counts it: no count on open.
std::optional<Transcript>
open_or_report(const TranscriptArgs& a, bool read_only, int& status, bool full_scan = false) {
    auto log = spdlog::stderr_color_st("transcript");
    log->set_pattern("sluice: %v");
    spdlog::set_default_logger(log);
    std::error_code fs_ec;
    if (!read_only
        && std::filesystem::status(a.file, fs_ec).type() == std::filesystem::file_type::not_found) {
        // Opened for writing (`index`), a missing file would be created: a typo is an error.
        status = fail(a.file, "no such file");
        return std::nullopt;
    }
    if (std::filesystem::is_regular_file(a.file, fs_ec) && looks_binary(a.file)) {
        status = fail(a.file + ":1", "a binary file, not JSONL");
        return std::nullopt;
    }
    TranscriptOptions opts{
        .read_only = read_only,
        .write_index = !read_only,
        .strict = a.strict,
        .count_on_open = !full_scan,
        .row_scan = !a.full_parse};
    if (::isatty(STDERR_FILENO) != 0) {
        opts.progress = draw_progress;
    }
    auto t = Transcript::open(a.file, opts);
    if (!t) {
        status = fail(
            a.file,
            t.error() == make_error_code(errc::not_found)     ? "no such file"
            : t.error() == make_error_code(errc::bad_request) ? "not a regular file"
                                                              : t.error().message());
        return std::nullopt;
    }
    return std::move(*t);
}

// Clears a progress bar left on the terminal.
void end_progress() {
    if (std::exchange(progress_drawn, false)) {
        std::fputs("\r\033[K", stderr);
    }
}

int read_failed(const Transcript& t, const TranscriptArgs& a, const boost::system::error_code& ec) {
    if (t.bad_line()) {
        return fail(a.file + ":" + std::to_string(t.bad_line()->line), t.bad_line()->what);
    }
    return fail(a.file, ec.message());
}

// Each bad line was reported as it was met ("FILE:LINE: skipped: why"); this says how many.
void report_bad(const Transcript& t, const TranscriptArgs& a) {
    if (t.bad_lines_total() > 0) {
        end_progress();
        std::fprintf(
            stderr,
            "sluice: %s: %llu bad line(s) skipped (--strict stops at the first)\n",
            a.file.c_str(),
            static_cast<unsigned long long>(t.bad_lines_total()));
    }
}

void print(const boost::json::object& o) {
    end_progress();
    std::printf("%s\n", boost::json::serialize(o).c_str());
}

// A window is tens of MiB of frames parsed at once; on a VM most of that time went to page faults
// (perf, bench/RESULTS.md "Conversation window"). Keep the heap in one sbrk region that glibc does
// not hand back, and ask for transparent huge pages on it: 2 MiB faults instead of 4 KiB ones.
void prepare_heap() {
    constexpr std::size_t PAD = 256U << 20;
    constexpr std::uintptr_t HUGE_PAGE = 2U << 20;
    ::mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
    ::mallopt(M_TOP_PAD, static_cast<int>(PAD));
    const auto lo = reinterpret_cast<std::uintptr_t>(::sbrk(0));
    void* volatile grow = ::malloc(1 << 20); // grows the heap by the pad (volatile: not elided)
    ::free(grow);
    const auto hi = reinterpret_cast<std::uintptr_t>(::sbrk(0));
    const std::uintptr_t from = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (hi > from) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): an address rounded from sbrk's, for madvise
        ::madvise(reinterpret_cast<void*>(from), hi - from, MADV_HUGEPAGE); // advice only
    }
}

int run_window(const TranscriptArgs& a) {
    prepare_heap();
    int status = 0;
    auto t = open_or_report(a, true, status);
    if (!t) {
        return status;
    }
    Budget b;
    if (a.cap) {
        b.cap = *a.cap;
        b.slack = *a.cap / 4;
    }
    if (a.cap_bytes) {
        b.cap_bytes = *a.cap_bytes;
        b.slack_bytes = *a.cap_bytes / 4;
    }
    Shed shed;
    auto w = t->load_window(b, &shed);
    if (!w) {
        return read_failed(*t, a, w.error());
    }
    boost::json::object o{
        {"total_frames", t->frame_count()},
        {"first", w->first()},
        {"frames", w->size()},
        {"bytes", w->bytes()},
        {"first_opens_turn", w->size() > 0 && w->opens_turn(w->first())},
        {"turns", w->openings().size()},
        {"shed", {{"frames", shed.frames}, {"thinking", shed.thinking}}},
        {"bad_lines", t->bad_lines_total()},
    };
    report_bad(*t, a);
    if (a.json) {
        print(o);
    } else {
        std::printf(
            "%s: %llu frames; window from %llu: %zu frames, %llu bytes, %zu turns\n",
            a.file.c_str(),
            static_cast<unsigned long long>(t->frame_count()),
            static_cast<unsigned long long>(w->first()),
            w->size(),
            static_cast<unsigned long long>(w->bytes()),
            w->openings().size());
    }
    return 0;
}

int run_turns(const TranscriptArgs& a) {
    int status = 0;
    auto t = open_or_report(a, true, status, true);
    if (!t) {
        return status;
    }
    auto ops = t->openings();
    if (!ops) {
        return read_failed(*t, a, ops.error());
    }
    boost::json::array arr;
    for (auto p : *ops) {
        arr.emplace_back(p);
    }
    report_bad(*t, a);
    if (a.json) {
        print({{"total_frames", t->frame_count()}, {"openings", std::move(arr)}});
    } else {
        std::printf(
            "%s: %llu frames, %zu turns\n",
            a.file.c_str(),
            static_cast<unsigned long long>(t->frame_count()),
            ops->size());
    }
    return 0;
}

int run_page(const TranscriptArgs& a) {
    prepare_heap();
    int status = 0;
    auto t = open_or_report(a, true, status);
    if (!t) {
        return status;
    }
    auto p = t->page(a.before.value_or(t->frame_count()), a.turns);
    if (!p) {
        return read_failed(*t, a, p.error());
    }
    // Frames go out as they are stored, serialized once; no second DOM is built.
    std::string out = "{\"turns\":[";
    for (std::size_t i = 0; i < p->turns.size(); ++i) {
        out += (i > 0 ? ",{\"first\":" : "{\"first\":") + std::to_string(p->turns[i].first)
               + ",\"frames\":[";
        for (std::size_t k = 0; k < p->turns[i].frames.size(); ++k) {
            if (k > 0) {
                out += ',';
            }
            out += p->turns[i].frames[k]->json();
        }
        out += "]}";
    }
    report_bad(*t, a);
    out += "],\"cursor\":" + (p->cursor ? std::to_string(*p->cursor) : std::string("null")) + "}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

int run_index(const TranscriptArgs& a) {
    int status = 0;
    auto t = open_or_report(a, false, status, true);
    if (!t) {
        return status;
    }
    if (auto r = t->build_index(); !r) {
        return read_failed(*t, a, r.error());
    }
    boost::json::object o{
        {"total_frames", t->frame_count()},
        {"lines", t->line_count()},
        {"index", Transcript::index_path(a.file).string()},
        {"bad_lines", t->bad_lines_total()}};
    report_bad(*t, a);
    if (a.json) {
        print(o);
    } else {
        std::printf(
            "%s: indexed %llu frames\n",
            a.file.c_str(),
            static_cast<unsigned long long>(t->frame_count()));
    }
    return 0;
}

} // namespace

void add_transcript_command(CLI::App& app) {
    auto* sub = app.add_subcommand("transcript", "Offline work on a JSONL transcript");
    sub->require_subcommand(1);
    auto args = std::make_shared<TranscriptArgs>();
    // The nested subcommands' actions; `transcript` runs the chosen one.
    auto nested = std::make_shared<std::map<const CLI::App*, std::function<int()>>>();
    on_selected(sub, [sub, nested] {
        for (const auto* c : sub->get_subcommands()) {
            if (auto it = nested->find(c); it != nested->end()) {
                return it->second();
            }
        }
        return BAD_INPUT;
    });
    auto common = [args](CLI::App* c) {
        c->add_option("FILE", args->file, "JSONL transcript")->required();
        c->add_flag("--json", args->json, "print one JSON object");
        c->add_flag(
            "--strict", args->strict, "fail at the first bad line (default: report it, go on)");
    };
    auto* window = sub->add_subcommand("window", "The window a resume would hand over");
    common(window);
    window->add_option("--cap", args->cap, "frames kept (slack = cap/4)");
    window->add_option("--cap-bytes", args->cap_bytes, "wire bytes kept (slack = cap/4)");
    (*nested)[window] = [args] { return run_window(*args); };

    auto full_parse = [args](CLI::App* c) {
        c->add_flag(
            "--full-parse",
            args->full_parse,
            "parse every row in full, not only the turn scan's fields (slower; to compare)");
    };
    auto* turns = sub->add_subcommand("turns", "Every turn opening");
    common(turns);
    full_parse(turns);
    (*nested)[turns] = [args] { return run_turns(*args); };

    auto* page = sub->add_subcommand("page", "The newest turns before a cursor");
    common(page);
    page->add_option("--before", args->before, "frame position (default: the end)");
    page->add_option("--turns", args->turns, "turns (at most 20)");
    (*nested)[page] = [args] { return run_page(*args); };

    auto* index = sub->add_subcommand("index", "Build the sidecar index (FILE.sidx)");
    common(index);
    full_parse(index);
    (*nested)[index] = [args] { return run_index(*args); };
}

} // namespace sluice::app
