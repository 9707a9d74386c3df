// Fuzzes the SSE parser: any bytes, fed whole and split at a point the input picks, must give
// the same events and the same verdict (the parser's promise), and never crash or grow unbounded.
#include <sluice/net/sse.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) {
        return 0;
    }
    const std::size_t cut = data[0] % size;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    const sluice::sse::Limits limits{.max_line = 4096, .max_event = 16384};

    sluice::sse::Parser whole(limits);
    std::vector<sluice::sse::Event> a;
    const auto ea = whole.feed(bytes, a);

    sluice::sse::Parser split(limits);
    std::vector<sluice::sse::Event> b;
    auto eb = split.feed(bytes.substr(0, std::min(cut, bytes.size())), b);
    if (!eb) {
        eb = split.feed(bytes.substr(std::min(cut, bytes.size())), b);
    }
    if (static_cast<bool>(ea) != static_cast<bool>(eb)) {
        std::abort(); // a split changed the verdict
    }
    if (!ea) {
        if (a.size() != b.size()) {
            std::abort();
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a[i].type != b[i].type || a[i].data != b[i].data || a[i].id != b[i].id) {
                std::abort(); // a split changed an event
            }
        }
    }
    return 0;
}
