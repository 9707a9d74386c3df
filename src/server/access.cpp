// Host and Origin checks, the JSON rule, URL redaction and wrong-token backoff (sans-I/O).
#include <sluice/server/access.hpp>

#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>

namespace sluice::server::access {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return out;
}

bool is_ip_literal(std::string_view host) {
    if (host.find(':') != std::string_view::npos) {
        return true; // IPv6 (brackets already dropped)
    }
    if (host.empty()) {
        return false;
    }
    return std::all_of(
        host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// "scheme://authority" of a URL, lowercased; nullopt when it has no scheme or host.
std::optional<std::string> origin_of(std::string_view url) {
    auto u = boost::urls::parse_absolute_uri(url);
    if (!u || !u->has_authority() || u->host().empty()) {
        auto r = boost::urls::parse_uri(url);
        if (!r || !r->has_authority() || r->host().empty()) {
            return std::nullopt;
        }
        return lower(std::string(r->scheme()) + "://" + std::string(r->encoded_authority()));
    }
    return lower(std::string(u->scheme()) + "://" + std::string(u->encoded_authority()));
}

// An authority with the scheme's default port dropped ("h:80" for http is "h").
std::string without_default_port(std::string_view scheme, std::string authority) {
    const std::string_view def = scheme == "https" || scheme == "wss" ? ":443" : ":80";
    if (authority.size() > def.size()
        && std::string_view(authority).substr(authority.size() - def.size()) == def) {
        authority.resize(authority.size() - def.size());
    }
    return authority;
}

} // namespace

SiteNames site_names(
    std::string_view listen_host,
    const std::vector<std::string>& allow_hosts,
    const std::vector<std::string>& allow_origins,
    std::string_view public_url) {
    SiteNames n;
    n.hosts = {"localhost", "127.0.0.1", "::1"};
    const std::string lh = lower(listen_host);
    if (lh == "0.0.0.0" || lh == "::" || lh.empty()) {
        n.any_ip_literal = true;
    } else if (!contains(n.hosts, lh)) {
        n.hosts.push_back(lh);
    }
    for (const auto& h : allow_hosts) {
        if (auto name = host_of(h)) {
            n.hosts.push_back(*name);
        } else {
            n.hosts.push_back(lower(h));
        }
    }
    for (const auto& o : allow_origins) {
        n.origins.push_back(o == "*" ? o : origin_of(o).value_or(lower(o)));
    }
    if (!public_url.empty()) {
        if (auto o = origin_of(public_url)) {
            n.origins.push_back(*o);
            if (auto h = host_of(o->substr(o->find("://") + 3))) {
                n.hosts.push_back(*h);
            }
        }
    }
    return n;
}

std::string listen_host(std::string_view listen) {
    const auto colon = listen.rfind(':');
    std::string host(listen.substr(0, colon == std::string_view::npos ? listen.size() : colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    return host.empty() ? std::string("127.0.0.1") : host;
}

std::optional<std::string> host_of(std::string_view authority) {
    if (authority.empty()) {
        return std::nullopt;
    }
    std::string_view host = authority;
    std::string_view port;
    if (authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) {
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') {
                return std::nullopt;
            }
            port = rest.substr(1);
        }
    } else {
        const auto colon = authority.rfind(':');
        if (colon != std::string_view::npos) {
            if (authority.find(':') != colon) {
                return std::nullopt; // a bare IPv6 address is not a Host
            }
            host = authority.substr(0, colon);
            port = authority.substr(colon + 1);
        }
        for (const char c : host) {
            const auto u = static_cast<unsigned char>(c);
            if (std::isalnum(u) == 0 && c != '-' && c != '.' && c != '_') {
                return std::nullopt;
            }
        }
    }
    if (host.empty() || port.size() > 5
        || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return lower(host);
}

bool host_allowed(const SiteNames& names, std::string_view host_header) {
    if (host_header.empty()) {
        return true;
    }
    const auto host = host_of(host_header);
    if (!host) {
        return false;
    }
    if (contains(names.hosts, *host)) {
        return true;
    }
    return names.any_ip_literal && is_ip_literal(*host);
}

bool origin_allowed(
    const SiteNames& names,
    std::string_view origin,
    std::string_view host_header,
    std::string_view own_scheme) {
    const auto o = origin_of(origin);
    if (!o) {
        return false; // "null", or not an origin at all
    }
    if (contains(names.origins, "*") || contains(names.origins, *o)) {
        return true;
    }
    const auto sep = o->find("://");
    if (o->substr(0, sep) != own_scheme || host_header.empty()) {
        return false;
    }
    // The hub's own origin: the page was loaded from the authority this request is sent to,
    // by the scheme the hub (or the TLS proxy in front of it) speaks.
    return without_default_port(own_scheme, o->substr(sep + 3))
           == without_default_port(own_scheme, lower(host_header));
}

bool is_loopback_peer(std::string_view peer) {
    if (peer == "::1") {
        return true;
    }
    constexpr std::string_view MAPPED = "::ffff:";
    if (peer.size() > MAPPED.size() && lower(peer.substr(0, MAPPED.size())) == MAPPED) {
        peer.remove_prefix(MAPPED.size());
    }
    return peer.size() > 4 && peer.substr(0, 4) == "127."
           && peer.find(':') == std::string_view::npos && is_ip_literal(peer);
}

std::string_view
own_scheme(bool tls, bool behind_proxy, std::string_view peer, std::string_view forwarded_proto) {
    if (tls) {
        return "https";
    }
    if (!behind_proxy || !is_loopback_peer(peer)) {
        return "http";
    }
    // A list ("http, https") grows by one value per proxy: the last is the one the proxy in
    // front of the hub wrote; earlier ones may be anybody's (a client can send the header).
    const auto comma = forwarded_proto.rfind(',');
    auto last =
        comma == std::string_view::npos ? forwarded_proto : forwarded_proto.substr(comma + 1);
    while (!last.empty() && (last.back() == ' ' || last.back() == '\t')) {
        last.remove_suffix(1);
    }
    while (!last.empty() && (last.front() == ' ' || last.front() == '\t')) {
        last.remove_prefix(1);
    }
    return lower(last) == "https" ? "https" : "http";
}

bool is_json(std::string_view content_type) {
    const auto semi = content_type.find(';');
    auto type = content_type.substr(0, semi);
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) {
        type.remove_suffix(1);
    }
    while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) {
        type.remove_prefix(1);
    }
    return lower(type) == "application/json";
}

std::string redact_target(std::string_view target) {
    const auto q = target.find('?');
    if (q == std::string_view::npos) {
        return std::string(target);
    }
    std::string out(target.substr(0, q + 1));
    std::string_view rest = target.substr(q + 1);
    bool first = true;
    while (true) {
        const auto amp = rest.find('&');
        const auto pair = rest.substr(0, amp);
        if (!first) {
            out += '&';
        }
        first = false;
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) == "access_token") {
            out += "access_token=REDACTED";
        } else {
            out += pair;
        }
        if (amp == std::string_view::npos) {
            break;
        }
        rest = rest.substr(amp + 1);
    }
    return out;
}

std::optional<std::chrono::seconds> Backoff::held(std::string_view peer, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = peers_.find(std::string(peer));
    if (it == peers_.end() || it->second.until <= now) {
        return std::nullopt;
    }
    const auto left = std::chrono::ceil<std::chrono::seconds>(it->second.until - now);
    return std::max(left, std::chrono::seconds(1));
}

std::optional<std::chrono::seconds> Backoff::failed(std::string_view peer, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = peers_.find(std::string(peer));
    if (it == peers_.end()) {
        if (peers_.size() >= limits_.max_peers) {
            auto stalest = std::min_element(peers_.begin(), peers_.end(), [](auto& a, auto& b) {
                return a.second.last < b.second.last;
            });
            peers_.erase(stalest);
        }
        it = peers_.emplace(std::string(peer), Peer{}).first;
    }
    auto& p = it->second;
    if (p.failures > 0 && now - p.last > limits_.forget) {
        p = Peer{};
    }
    ++p.failures;
    p.last = now;
    if (p.failures <= limits_.free_failures) {
        return std::nullopt;
    }
    const unsigned over = std::min(p.failures - limits_.free_failures - 1, 30U);
    auto interval = limits_.first * (std::int64_t{1} << over);
    interval = std::min(interval, limits_.longest);
    p.until = now + interval;
    return interval;
}

std::size_t Backoff::peers() const {
    std::lock_guard lock(mu_);
    return peers_.size();
}

} // namespace sluice::server::access
