// The sluice error category.
#include <sluice/core/error.hpp>

#include <string>

namespace sluice {

namespace {

class Category final : public boost::system::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "sluice"; }

    [[nodiscard]] std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::ok:
            return "ok";
        case errc::bad_request:
            return "bad request";
        case errc::not_found:
            return "not found";
        case errc::conflict:
            return "conflict with the current state";
        case errc::payload_too_large:
            return "payload too large";
        case errc::overloaded:
            return "overloaded";
        case errc::unauthorized:
            return "unauthorized";
        case errc::cancelled:
            return "cancelled";
        case errc::timed_out:
            return "timed out";
        case errc::protocol_error:
            return "protocol error";
        case errc::provider_error:
            return "provider error";
        case errc::io_error:
            return "I/O error";
        case errc::corrupt_data:
            return "corrupt data";
        case errc::relay_closed:
            return "relay closed";
        }
        return "unknown sluice error";
    }
};

} // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

} // namespace sluice
