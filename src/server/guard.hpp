// The access checks every request passes before routing: Host, Origin, token, JSON, role.
#pragma once

#include "message.hpp"

#include <sluice/server/access.hpp>
#include <sluice/server/auth.hpp>
#include <sluice/server/server.hpp>

#include <boost/url/url_view.hpp>

#include <optional>
#include <string_view>

namespace sluice::server {

/// Who may ask this hub what: the tokens accepted (owner and viewers), the wrong-token backoff
/// per peer, and the Host and Origin allow-lists, all fixed by the configuration but the
/// backoff.
///
/// @par Thread safety
/// Safe from any thread (the keyring and the backoff guard their own state).
class Guard {
public:
    /// The checks `cfg` asks for: its owner token and viewer tokens (`token_dir`), its names
    /// (listen address, `allow_hosts`, `allow_origins`, `public_url`), its backoff limits.
    explicit Guard(const ServerConfig& cfg);

    /// The access checks of one request, before routing: Host (421), Origin (403), token (401,
    /// 429 while a peer is held back), JSON for state changes (415), a viewer's limits (403),
    /// and `/v1/whoami`. @param peer the client's address, for the backoff. @param tls whether
    /// the hub speaks TLS itself (the scheme an Origin must have). @return the answer to send
    /// instead of routing, or nothing (then `out` says who asks).
    std::optional<Response> check(
        const Request& req,
        const boost::urls::url_view& url,
        std::string_view peer,
        bool tls,
        Access& out);

private:
    auth::Keyring keyring_;   // the tokens accepted
    access::Backoff backoff_; // wrong-token backoff per peer
    access::SiteNames names_; // Host and Origin allow-lists
    bool behind_proxy_;       // trust X-Forwarded-Proto from a loopback peer
};

} // namespace sluice::server
