// The search indexer alone (issue 29): a generated tree of session files indexed, the index rate,
// RSS growth while indexing (VmHWM), query p50/p99 over the index. Not Google Benchmark: one run
// of a few hundred MB, as relay_rss.cpp.
// Usage: sluice_search_rss FIXTURE FILES COPIES DIR (DIR: an empty scratch folder).
#include <sluice/hub/search_indexer.hpp>

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

long rss_kib(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) {
            return std::stol(line.substr(std::string(key).size()));
        }
    }
    return -1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: sluice_search_rss FIXTURE FILES COPIES DIR\n");
        return 2;
    }
    namespace fs = std::filesystem;
    const std::string fixture = argv[1];
    const int files = std::stoi(argv[2]);
    const int copies = std::stoi(argv[3]);
    const fs::path dir = argv[4];
    std::ifstream in(fixture, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string body;
    for (int i = 0; i < copies; ++i) {
        body += ss.str();
    }
    fs::create_directories(dir / "p");
    std::uint64_t total = 0;
    for (int i = 0; i < files; ++i) {
        std::ofstream(dir / "p" / (std::to_string(i) + ".jsonl"), std::ios::binary) << body;
        total += body.size();
    }
    body = std::string();
    ss = std::stringstream();
    ::malloc_trim(0); // the copies' pages back to the system
    {
        // The peak from here on (VmHWM reset: writing 5 to clear_refs), not the copies above.
        std::ofstream("/proc/self/clear_refs") << "5";
    }
    const long rss0 = rss_kib("VmRSS:");
    const auto t0 = std::chrono::steady_clock::now();
    sluice::hub::SearchIndexer ix(dir / "search.db");
    for (int i = 0; i < files; ++i) {
        ix.changed(
            dir / "p" / (std::to_string(i) + ".jsonl"),
            {"s" + std::to_string(i), "", "claude", "", false, false});
    }
    ix.wait_idle();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long hwm = rss_kib("VmHWM:");
    std::printf(
        "indexed %.0f MB in %.1f s: %.1f MB/s; RSS %.1f MiB before, peak %.1f MiB (growth %.1f "
        "MiB)\n",
        static_cast<double>(total) / 1e6,
        secs,
        static_cast<double>(total) / 1e6 / secs,
        static_cast<double>(rss0) / 1024,
        static_cast<double>(hwm) / 1024,
        static_cast<double>(hwm - rss0) / 1024);
    const char* qs[] = {
        "manifest",
        "package.json",
        "git status",
        "ls -la",
        "error",
        "TODO",
        "README",
        "function",
        "src/",
        "import",
        "npm run",
        "ifest.j",
        "deep",
        "xyzzy-not-there"};
    std::vector<double> lat;
    for (int i = 0; i < 500; ++i) {
        sluice::hub::SearchQuery q;
        q.q = qs[i % 14];
        const auto s = std::chrono::steady_clock::now();
        auto p = ix.search(q);
        lat.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s)
                .count());
    }
    std::sort(lat.begin(), lat.end());
    std::printf(
        "queries (limit 20, 500): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
        lat[250],
        lat[494],
        lat.back());
}
