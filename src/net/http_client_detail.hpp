// Private: URL, proxy and small text helpers of the HTTP client (no Asio).
#pragma once

#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::transport::detail {

/// ASCII case-insensitive equality.
[[nodiscard]] bool iequals(std::string_view a, std::string_view b);

/// An environment variable, "" when unset.
[[nodiscard]] std::string env(const char* name);

/// The lower-case variable if set, else the upper-case one (curl's convention).
[[nodiscard]] std::string env_either(const char* upper, const char* lower);

/// "10 s" or "250 ms", for error lines.
[[nodiscard]] std::string seconds_text(std::chrono::milliseconds d);

/// Standard base64 with padding (for Proxy-Authorization: Basic).
[[nodiscard]] std::string base64(std::string_view in);

/// A parsed http(s) URL.
struct Target {
    bool tls{};
    std::string host;     ///< for DNS / SNI (no brackets)
    std::string host_hdr; ///< for the Host header (brackets, port if not default)
    std::uint16_t port{};
    std::string path;     ///< origin-form target
    std::string absolute; ///< absolute-form target (for a plain-http proxy)
    std::string userinfo; ///< decoded user:password (proxies)
};

/// Parses an absolute http:// or https:// URL; errc::bad_request otherwise.
[[nodiscard]] boost::system::result<Target> parse_target(std::string_view text);

} // namespace sluice::transport::detail
