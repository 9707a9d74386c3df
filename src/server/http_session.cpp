// The HTTP session's non-template parts, and its instantiation for the server's tcp_stream.
#include "http_session_impl.hpp"

namespace sluice::server::session_detail {

namespace {

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = static_cast<unsigned char>(
            diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
    }
    return diff == 0;
}

} // namespace

bool authorized(const Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    if (s.cfg.token.empty()) {
        return true;
    }
    const auto auth = req[http::field::authorization];
    constexpr std::string_view BEARER = "Bearer ";
    if (auth.size() > BEARER.size() && auth.substr(0, BEARER.size()) == BEARER
        && constant_time_equal(auth.substr(BEARER.size()), s.cfg.token)) {
        return true;
    }
    if (auto q = query_param(url, "access_token")) {
        return constant_time_equal(*q, s.cfg.token);
    }
    return false;
}

std::optional<std::pair<std::string, std::string>> stream_route(const boost::urls::url_view& url) {
    auto segs = url.segments();
    std::vector<std::string> parts(segs.begin(), segs.end());
    if (parts.size() == 4 && parts[0] == "v1" && parts[1] == "seats"
        && (parts[3] == "events" || parts[3] == "ws")) {
        return std::pair{parts[2], parts[3]};
    }
    return std::nullopt;
}

} // namespace sluice::server::session_detail

namespace sluice::server {

template net::awaitable<void> serve_http<beast::tcp_stream>(
    std::shared_ptr<Server::Impl>, beast::tcp_stream, Connections::Ticket);

} // namespace sluice::server
