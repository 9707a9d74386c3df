// The one place where sluice errors become HTTP statuses and JSON error bodies.
#pragma once

#include <sluice/core/error.hpp>

#include <string>
#include <string_view>

namespace sluice::server {

/// The HTTP status for an error (400, 401, 404, 409, 413, 503, 504, or 500 for the rest).
[[nodiscard]] unsigned http_status(const boost::system::error_code& ec) noexcept;

/// The stable machine-readable code for an error ("bad_request", "not_found", …).
[[nodiscard]] std::string_view error_code_name(const boost::system::error_code& ec) noexcept;

/// `{"error":{"code":…,"message":…}}` for an error and a message for a person.
[[nodiscard]] std::string error_body(const boost::system::error_code& ec, std::string_view message);

/// What to tell a client whose prompt a seat refused (`Seat::submit`'s error): the reason,
/// for HTTP and WebSocket alike.
[[nodiscard]] std::string_view submit_refusal(const boost::system::error_code& ec) noexcept;

/// The error a handler's escaped exception becomes: 500, code "internal".
[[nodiscard]] boost::system::error_code internal_error() noexcept;

} // namespace sluice::server
