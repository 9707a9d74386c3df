// Error → HTTP status and JSON body.
#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

namespace sluice::server {

unsigned http_status(const boost::system::error_code& ec) noexcept {
    if (ec.category() != error_category()) {
        return 500;
    }
    switch (static_cast<errc>(ec.value())) {
    case errc::ok: return 200;
    case errc::bad_request: return 400;
    case errc::unauthorized: return 401;
    case errc::not_found: return 404;
    case errc::conflict: return 409;
    case errc::payload_too_large: return 413;
    case errc::overloaded: return 503;
    case errc::timed_out: return 504;
    case errc::provider_error: return 502;
    default: return 500;
    }
}

std::string_view error_code_name(const boost::system::error_code& ec) noexcept {
    if (ec.category() != error_category()) {
        return "internal";
    }
    switch (static_cast<errc>(ec.value())) {
    case errc::ok: return "ok";
    case errc::bad_request: return "bad_request";
    case errc::not_found: return "not_found";
    case errc::conflict: return "conflict";
    case errc::payload_too_large: return "payload_too_large";
    case errc::overloaded: return "overloaded";
    case errc::unauthorized: return "unauthorized";
    case errc::cancelled: return "cancelled";
    case errc::timed_out: return "timed_out";
    case errc::protocol_error: return "protocol_error";
    case errc::provider_error: return "provider_error";
    case errc::io_error: return "io_error";
    case errc::corrupt_data: return "corrupt_data";
    case errc::relay_closed: return "relay_closed";
    }
    return "internal";
}

std::string error_body(const boost::system::error_code& ec, std::string_view message) {
    boost::json::object err;
    err["code"] = error_code_name(ec);
    err["message"] = message;
    boost::json::object body;
    body["error"] = std::move(err);
    return boost::json::serialize(body);
}

std::string_view submit_refusal(const boost::system::error_code& ec) noexcept {
    if (ec == make_error_code(errc::conflict)) {
        return "the seat is closed";
    }
    if (ec == make_error_code(errc::overloaded)) {
        return "too many prompts queued on this seat (max_queued_prompts)";
    }
    if (ec == make_error_code(errc::bad_request)) {
        return "field 'text' must not be empty";
    }
    return "cannot accept the prompt";
}

boost::system::error_code internal_error() noexcept {
    return boost::system::errc::make_error_code(boost::system::errc::state_not_recoverable);
}

} // namespace sluice::server
