// Fuzzes the WebSocket op decoder: a client message → JSON → the shared validator of `send`
// and `more` (the part of ws_answer that reads what the client sent; the seat's answer is the
// hub's, covered by the HTTP request target's history route).
#include <sluice/server/validate.hpp>

#include <boost/json/parse.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view message(reinterpret_cast<const char*>(data), size);
    boost::system::error_code ec;
    auto v = boost::json::parse(message, ec);
    if (ec || !v.is_object()) {
        return 0;
    }
    const auto& op = v.get_object();
    sluice::server::SendOp send;
    if (!sluice::server::validate_send(op, send) && send.text.empty()) {
        std::abort(); // accepted an empty prompt
    }
    sluice::server::MoreOp more;
    if (!sluice::server::validate_more(op.if_contains("before"), op.if_contains("turns"), more)
        && (more.turns < 1 || more.turns > 20)) {
        std::abort(); // accepted a page size out of range
    }
    return 0;
}
