// Failure: an error code plus the reason a person reads — what the hub returns instead of throwing.
// Header-only by design (one aggregate and an alias).
#pragma once

#include <sluice/core/error.hpp>

#include <boost/system/result.hpp>
#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

#include <string>
#include <utility>

namespace sluice::hub {

/// Why the hub refused or could not do something: `code` for the status a transport picks
/// (server/errors.hpp), `message` naming the reason (the field, the limit, the missing flag,
/// the OS error and the file).
///
/// @par Thread safety
/// A value type.
struct Failure {
    boost::system::error_code code; ///< sluice::errc (or an OS code)
    std::string message;            ///< one line for a person

    /// A failure from a sluice error code and a reason.
    static Failure of(errc e, std::string why) {
        return Failure{make_error_code(e), std::move(why)};
    }

    /// The code alone, so callers that only branch on the code read it like an error_code.
    operator boost::system::error_code() const noexcept {
        return code;
    } // NOLINT(google-explicit-constructor)
};

/// A value, or a Failure with its reason.
template <class T>
using Result = boost::system::result<T, Failure>;

/// What `Result::value()` throws on a Failure (used only by callers that choose to throw).
[[noreturn]] inline void
throw_exception_from_error(const Failure& f, const boost::source_location& loc) {
    boost::throw_exception(boost::system::system_error(f.code, f.message), loc);
}

} // namespace sluice::hub
