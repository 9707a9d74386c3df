// Stalled consumer: produce N GiB of deltas into a relay nobody reads; report peak RSS growth.
// Usage: sluice_relay_rss [GiB=4]. Prints one JSON line.
#include <sluice/core/relay.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

// VmHWM (peak resident set) and VmRSS of this process, in KiB.
long status_kib(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) {
            return std::strtol(line.c_str() + std::char_traits<char>::length(key), nullptr, 10);
        }
    }
    return -1;
}

} // namespace

int main(int argc, char** argv) {
    const double gib = argc > 1 ? std::strtod(argv[1], nullptr) : 4.0;
    const auto total = static_cast<std::uint64_t>(gib * 1024.0 * 1024.0 * 1024.0);
    const std::string small(64, 's');
    const std::string big(4096, 'b');
    sluice::CancellationToken turn;
    auto [tx, rx] = sluice::make_stream_relay(turn);
    // Warm up allocator and relay so the baseline includes their fixed cost.
    for (int i = 0; i < 1000; ++i) {
        tx.send(sluice::llm::Text{big});
    }
    const long base_hwm = status_kib("VmHWM:");
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t sent = 0;
    for (std::uint64_t i = 0; sent < total; ++i) {
        const std::string& s = i % 8 == 0 ? big : small;
        tx.send(sluice::llm::Text{s});
        sent += s.size();
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long peak_hwm = status_kib("VmHWM:");
    const auto snap = sluice::stream_relay_snapshot();
    std::printf(
        "{\"produced_bytes\":%llu,\"seconds\":%.2f,\"bytes_per_s\":%.0f,\"baseline_peak_rss_kib\":%"
        "ld,"
        "\"peak_rss_kib\":%ld,\"peak_rss_growth_kib\":%ld,\"retained\":%llu,\"peak_retained\":%llu}"
        "\n",
        static_cast<unsigned long long>(sent),
        secs,
        static_cast<double>(sent) / secs,
        base_hwm,
        peak_hwm,
        peak_hwm - base_hwm,
        static_cast<unsigned long long>(snap.retained_delta_bytes),
        static_cast<unsigned long long>(snap.peak_retained_delta_bytes));
    return 0;
}
