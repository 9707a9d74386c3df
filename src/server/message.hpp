// The request and response types the server's files share, and what the access checks grant.
#pragma once

#include "shared_body.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/server/auth.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace sluice::server {

/// A request as read (its body a string, bounded by `--max-body-bytes`).
using Request = http::request<http::string_body>;
/// A response: its body is a shared immutable string (a page is never copied per client).
using Response = http::response<SharedBody>;

/// What the access checks decided for a request that may go on.
struct Access {
    auth::Grant grant;     ///< who asks (owner when no token is required)
    bool page_file{false}; ///< a GET of the page's static files (no token needed)
    /// Hex SHA-256 of the token presented ("" when none is required): whose push subscriptions.
    std::string token_digest;
};

} // namespace sluice::server
