// Fuzzes Last-Event-ID and cursor parsing: "<epoch>:<seq>" ids, and the history query's
// `before`/`turns` as the HTTP route reads them (query_value, then the validator).
#include "hub/ids.hpp"

#include <sluice/server/validate.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto id = sluice::hub::parse_event_id(text)) {
        // A parsed id prints back to the text it came from's epoch and a seq >= -1.
        if (id->second < -1 || text.substr(0, id->first.size()) != id->first) {
            std::abort();
        }
    }
    const auto amp = text.find('&');
    const auto before = sluice::server::query_value(text.substr(0, amp));
    const auto turns = sluice::server::query_value(
        amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1));
    sluice::server::MoreOp more;
    (void)sluice::server::validate_more(&before, &turns, more);
    return 0;
}
