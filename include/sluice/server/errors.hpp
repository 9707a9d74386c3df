// The one place where sluice errors become HTTP statuses; the bodies are hub/wire's.
#pragma once

#include <sluice/core/error.hpp>
#include <sluice/hub/wire.hpp>

#include <string>
#include <string_view>

namespace sluice::server {

/// The HTTP status for an error (400, 401, 404, 409, 413, 502, 503, 504, 507, or 500 for the rest).
/// The only errc → status map in sluice.
[[nodiscard]] unsigned http_status(const boost::system::error_code& ec) noexcept;

/// The stable machine-readable code for an error (one definition, in hub/wire).
using hub::wire::error_code_name;

/// `{"error":{"code":…,"message":…}}` (one definition, in hub/wire).
using hub::wire::error_body;

/// The error a handler's escaped exception becomes: 500, code "internal".
[[nodiscard]] boost::system::error_code internal_error() noexcept;

} // namespace sluice::server
