// The sluice error category.
#include <sluice/core/error.hpp>

#include <string>
#include <string_view>

namespace sluice {

namespace {

// Every errc once: its wire name (the `code` of a JSON error body) and its message.
struct Entry {
    errc code;
    std::string_view name;
    std::string_view message;
};

constexpr Entry ENTRIES[] = {
    {errc::ok, "ok", "ok"},
    {errc::bad_request, "bad_request", "bad request"},
    {errc::not_found, "not_found", "not found"},
    {errc::conflict, "conflict", "conflict with the current state"},
    {errc::payload_too_large, "payload_too_large", "payload too large"},
    {errc::overloaded, "overloaded", "overloaded"},
    {errc::unauthorized, "unauthorized", "unauthorized"},
    {errc::cancelled, "cancelled", "cancelled"},
    {errc::timed_out, "timed_out", "timed out"},
    {errc::protocol_error, "protocol_error", "protocol error"},
    {errc::provider_error, "provider_error", "provider error"},
    {errc::io_error, "io_error", "I/O error"},
    {errc::corrupt_data, "corrupt_data", "corrupt data"},
    {errc::relay_closed, "relay_closed", "relay closed"},
    {errc::insufficient_storage, "insufficient_storage", "no space left for the write"},
    {errc::read_only, "read_only", "read-only"},
};

const Entry* entry(int ev) noexcept {
    for (const auto& e : ENTRIES) {
        if (static_cast<int>(e.code) == ev) {
            return &e;
        }
    }
    return nullptr;
}

// Final, and its one object is the function-local static below; error_category's own destructor
// is protected and non-virtual, so there is no base to delete through.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor)
class Category final : public boost::system::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "sluice"; }

    [[nodiscard]] std::string message(int ev) const override {
        if (const auto* e = entry(ev)) {
            return std::string(e->message);
        }
        return "unknown sluice error";
    }
};

} // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

std::string_view errc_name(errc e) noexcept {
    const auto* x = entry(static_cast<int>(e));
    return x != nullptr ? x->name : std::string_view("internal");
}

} // namespace sluice
