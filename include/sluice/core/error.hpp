// The project's error codes (expected failures) and their boost::system category.
#pragma once

#include <boost/system/error_code.hpp>

#include <string_view>
#include <type_traits>

namespace sluice {

/// Expected failures: I/O, protocol, client mistakes, overload. HTTP status mapping lives in
/// server/.
enum class errc {
    ok = 0,
    bad_request = 1,      ///< malformed input from a client
    not_found,            ///< no such seat, file or position
    conflict,             ///< the request does not fit the current state
    payload_too_large,    ///< a body or line over its limit
    overloaded,           ///< a connection or queue limit was hit
    unauthorized,         ///< a bearer token is missing or wrong
    cancelled,            ///< the work was cancelled by its caller
    timed_out,            ///< a deadline passed
    protocol_error,       ///< a peer spoke the protocol wrongly
    provider_error,       ///< a model provider reported an error
    io_error,             ///< a file or socket failed
    corrupt_data,         ///< stored data is not what it should be
    relay_closed,         ///< the other end of a relay is gone
    insufficient_storage, ///< a write found no space (ENOSPC, EDQUOT) or hit a size limit (EFBIG)
    read_only,            ///< a write was refused: the file system or the file is read-only
};

/// The category of `sluice::errc`. @par Thread safety: safe from any thread.
const boost::system::error_category& error_category() noexcept;

/// The wire name of `e` ("bad_request", …): the `code` of a JSON error body.
[[nodiscard]] std::string_view errc_name(errc e) noexcept;

/// Makes an error_code from a sluice errc (found by ADL).
inline boost::system::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

} // namespace sluice

template <>
struct boost::system::is_error_code_enum<sluice::errc> : std::true_type {};
