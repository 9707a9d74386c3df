// Fuzzes one transcript line → Frame (parse, wire weight, turn facts) → TurnScan: each input is
// a few JSONL lines fed in order; a frame's wire weight must equal its compact JSON's length.
#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/json/serialize.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    sluice::TurnScan scan;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const auto line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        auto f = sluice::Frame::parse(line);
        if (!f) {
            continue;
        }
        const auto& frame = **f;
        (void)scan.opens_turn(frame);
        if (sluice::json_wire_bytes(frame.row()) != boost::json::serialize(frame.row()).size()) {
            std::abort(); // the counting writer disagrees with the serializer
        }
    }
    return 0;
}
