// Error → HTTP status.
#include <sluice/server/errors.hpp>

namespace sluice::server {

unsigned http_status(const boost::system::error_code& ec) noexcept {
    if (ec.category() != error_category()) {
        return 500;
    }
    switch (static_cast<errc>(ec.value())) {
    case errc::ok:
        return 200;
    case errc::bad_request:
        return 400;
    case errc::unauthorized:
        return 401;
    case errc::not_found:
        return 404;
    case errc::conflict:
    case errc::read_only:
        return 409;
    case errc::payload_too_large:
        return 413;
    case errc::overloaded:
        return 503;
    case errc::timed_out:
        return 504;
    case errc::provider_error:
        return 502;
    case errc::insufficient_storage:
        return 507;
    default:
        return 500;
    }
}

boost::system::error_code internal_error() noexcept {
    return boost::system::errc::make_error_code(boost::system::errc::state_not_recoverable);
}

} // namespace sluice::server
