// The HTTP session's non-template parts, and its instantiation for the server's tcp_stream.
#include "http_session_impl.hpp"

namespace sluice::server::session_detail {

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
