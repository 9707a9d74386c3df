// Who may knock: the Host allow-list (DNS rebinding), the Origin check (CSRF, cross-site
// WebSocket), the JSON-only rule for state changes, wrong-token backoff and URL redaction.
// Sans-I/O: pure functions and one small table, no Asio.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::server::access {

/// The names a hub answers to, and the foreign origins it lets in.
struct SiteNames {
    std::vector<std::string> hosts;   ///< host names and IP literals (lowercase, no port)
    std::vector<std::string> origins; ///< extra origins ("scheme://host[:port]", or "*")
    bool any_ip_literal{false};       ///< listening on every address: any IP literal Host is ours
};

/// The names of a hub listening on `listen_host` (an IP literal, IPv6 without brackets): the
/// loopback names (localhost, 127.0.0.1, ::1), the listen address, `allow_hosts`, and the host
/// of `public_url`; origins: `allow_origins` and `public_url`'s origin.
[[nodiscard]] SiteNames site_names(
    std::string_view listen_host,
    const std::vector<std::string>& allow_hosts,
    const std::vector<std::string>& allow_origins,
    std::string_view public_url);

/// The host of a listen address "host:port" ("[::1]:8420" → "::1"; ":8420" → "127.0.0.1").
[[nodiscard]] std::string listen_host(std::string_view listen);

/// The host part of a Host header value or an authority: lowercased, port dropped, IPv6
/// brackets dropped. nullopt when malformed (empty, bad port, stray characters).
[[nodiscard]] std::optional<std::string> host_of(std::string_view authority);

/// Whether a request's `Host` header names this hub. An absent Host (HTTP/1.0 tools) passes:
/// browsers always send one, so DNS rebinding cannot leave it out.
[[nodiscard]] bool host_allowed(const SiteNames& names, std::string_view host_header);

/// Whether a request carrying `Origin: origin` may go on: its origin is the hub's own,
/// `own_scheme://Host` (default ports aside), or one of `names.origins`. "null" and malformed
/// origins are refused.
[[nodiscard]] bool origin_allowed(
    const SiteNames& names,
    std::string_view origin,
    std::string_view host_header,
    std::string_view own_scheme);

/// Whether `peer` (an address as text, as the socket reports it) is a loopback address:
/// 127.0.0.0/8, ::1, or 127.x mapped into IPv6.
[[nodiscard]] bool is_loopback_peer(std::string_view peer);

/// The scheme of the hub's own origin for one request: "https" when the hub serves TLS, or
/// when a TLS proxy is in front (`behind_proxy`) and the request comes from a loopback `peer`
/// (that proxy) with `X-Forwarded-Proto: https` (its last value, the one that proxy wrote);
/// else "http". The header from any other peer, or without `behind_proxy`, is ignored: a
/// client cannot speak for the proxy.
[[nodiscard]] std::string_view
own_scheme(bool tls, bool behind_proxy, std::string_view peer, std::string_view forwarded_proto);

/// Whether a Content-Type value is JSON (`application/json`, parameters allowed).
[[nodiscard]] bool is_json(std::string_view content_type);

/// `target` with the value of every `access_token` query parameter replaced by "REDACTED":
/// the only form in which a URL may be logged.
[[nodiscard]] std::string redact_target(std::string_view target);

/// How wrong tokens are held back.
struct BackoffLimits {
    unsigned free_failures{8};         ///< wrong tokens a peer may send before backoff
    std::chrono::seconds first{1};     ///< the first interval; each next one doubles
    std::chrono::seconds longest{300}; ///< the interval stops growing here
    std::chrono::seconds forget{600};  ///< a peer quiet this long starts afresh
    std::size_t max_peers{4096};       ///< peers tracked; the stalest is forgotten first
};

/// Wrong-token backoff per peer address: after `free_failures` wrong tokens, a peer is refused
/// (429, Retry-After) for an interval that doubles with each further wrong token.
///
/// @par Thread safety
/// Safe from any thread (one mutex; no I/O).
class Backoff {
public:
    using Clock = std::chrono::steady_clock;

    explicit Backoff(BackoffLimits limits = {})
        : limits_(limits) {}

    /// If `peer` is held back at `now`: the seconds left (at least 1), for Retry-After.
    [[nodiscard]] std::optional<std::chrono::seconds>
    held(std::string_view peer, Clock::time_point now);

    /// Notes a wrong token from `peer`. @return the interval when this failure starts one (the
    /// caller logs it, once per interval), else nothing.
    std::optional<std::chrono::seconds> failed(std::string_view peer, Clock::time_point now);

    /// Peers tracked now.
    [[nodiscard]] std::size_t peers() const;

private:
    struct Peer {
        unsigned failures{0};
        Clock::time_point last{};
        Clock::time_point until{};
    };

    BackoffLimits limits_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, Peer> peers_; // guarded by mu_
};

} // namespace sluice::server::access
