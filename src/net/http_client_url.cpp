// The HTTP client's URL parsing, proxy choice (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) and helpers.
#include "http_client_detail.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace sluice::transport {

namespace detail {

bool iequals(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x))
               == std::tolower(static_cast<unsigned char>(y));
    });
}

std::string env(const char* name) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read-only use
    return v != nullptr ? std::string(v) : std::string();
}

std::string env_either(const char* upper, const char* lower) {
    auto v = env(lower);
    return v.empty() ? env(upper) : v;
}

std::string seconds_text(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms % 1000 == 0) {
        return std::to_string(ms / 1000) + " s";
    }
    return std::to_string(ms) + " ms";
}

std::string base64(std::string_view in) {
    static constexpr char TABLE[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    while (i + 2 < in.size()) {
        const auto n = (static_cast<unsigned>(static_cast<unsigned char>(in[i])) << 16U)
                       | (static_cast<unsigned>(static_cast<unsigned char>(in[i + 1])) << 8U)
                       | static_cast<unsigned>(static_cast<unsigned char>(in[i + 2]));
        out += TABLE[(n >> 18U) & 63U];
        out += TABLE[(n >> 12U) & 63U];
        out += TABLE[(n >> 6U) & 63U];
        out += TABLE[n & 63U];
        i += 3;
    }
    if (i < in.size()) {
        auto n = static_cast<unsigned>(static_cast<unsigned char>(in[i])) << 16U;
        if (i + 1 < in.size()) {
            n |= static_cast<unsigned>(static_cast<unsigned char>(in[i + 1])) << 8U;
        }
        out += TABLE[(n >> 18U) & 63U];
        out += TABLE[(n >> 12U) & 63U];
        out += i + 1 < in.size() ? TABLE[(n >> 6U) & 63U] : '=';
        out += '=';
    }
    return out;
}

boost::system::result<Target> parse_target(std::string_view text) {
    auto r = boost::urls::parse_uri(text);
    if (!r) {
        return errc::bad_request;
    }
    const auto& u = *r;
    Target t;
    const auto scheme = u.scheme();
    if (iequals(scheme, "https")) {
        t.tls = true;
    } else if (!iequals(scheme, "http")) {
        return errc::bad_request;
    }
    t.host = u.host_address();
    if (t.host.empty()) {
        return errc::bad_request;
    }
    const bool v6 = u.host_type() == boost::urls::host_type::ipv6;
    const std::uint16_t default_port = t.tls ? 443 : 80;
    t.port = u.has_port() ? u.port_number() : default_port;
    if (u.has_port() && t.port == 0) {
        return errc::bad_request;
    }
    // append() rather than "lit" + string: GCC 12 -O2 warns falsely (-Wrestrict) on the latter.
    t.host_hdr.clear();
    t.host_hdr.append(v6 ? "[" : "").append(t.host).append(v6 ? "]" : "");
    if (t.port != default_port) {
        t.host_hdr.append(":").append(std::to_string(t.port));
    }
    t.path = std::string(u.encoded_path());
    if (t.path.empty()) {
        t.path.push_back('/'); // not = "/": the same GCC 12 -Wrestrict false positive
    }
    if (u.has_query()) {
        t.path.append("?").append(u.encoded_query());
    }
    t.absolute.append(t.tls ? "https://" : "http://").append(t.host_hdr).append(t.path);
    if (u.has_userinfo()) {
        t.userinfo = u.userinfo();
    }
    return t;
}

} // namespace detail

using detail::env_either;
using detail::iequals;

std::string HttpResponse::header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (iequals(k, name)) {
            return v;
        }
    }
    return {};
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host) {
    while (!no_proxy.empty()) {
        const auto comma = no_proxy.find(',');
        std::string_view item = no_proxy.substr(0, comma);
        no_proxy =
            comma == std::string_view::npos ? std::string_view{} : no_proxy.substr(comma + 1);
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())) != 0) {
            item.remove_prefix(1);
        }
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())) != 0) {
            item.remove_suffix(1);
        }
        if (item.empty()) {
            continue;
        }
        if (item == "*") {
            return true;
        }
        // Drop a ":port" (not for bare IPv6 literals, which have several colons).
        if (const auto colon = item.rfind(':');
            colon != std::string_view::npos && item.find(':') == colon) {
            item = item.substr(0, colon);
        }
        if (item.front() == '.') {
            item.remove_prefix(1);
        }
        if (iequals(host, item)) {
            return true;
        }
        if (host.size() > item.size() && host[host.size() - item.size() - 1] == '.'
            && iequals(host.substr(host.size() - item.size()), item)) {
            return true;
        }
    }
    return false;
}

std::string proxy_from_environment(std::string_view scheme, std::string_view host) {
    if (no_proxy_matches(env_either("NO_PROXY", "no_proxy"), host)) {
        return {};
    }
    if (iequals(scheme, "https")) {
        return env_either("HTTPS_PROXY", "https_proxy");
    }
    // Lower-case http_proxy only under CGI conventions; upper-case is widely used too.
    return env_either("HTTP_PROXY", "http_proxy");
}

} // namespace sluice::transport
