// Fuzzes the stream-json row decoder (an agent's stdout, one line at a time, in order).
#include <sluice/runtime/agents/stream_json.hpp>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    sluice::runtime::stream_json::Decoder decoder;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        (void)decoder.decode(rest.substr(0, nl));
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    }
    return 0;
}
