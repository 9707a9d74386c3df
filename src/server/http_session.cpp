// The HTTP session's non-template parts (the answers it gives before routing), and its
// instantiation for the server's tcp_stream.
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

std::optional<Response> read_error_answer(const Server::Impl& s, boost::system::error_code ec) {
    Request dummy;
    dummy.version(11);
    std::optional<Response> res;
    if (ec == http::error::body_limit) {
        res = error_response(
            dummy,
            make_error_code(errc::payload_too_large),
            "request body over the limit (" + std::to_string(s.cfg.max_body_bytes) + " bytes)");
    } else if (ec == http::error::header_limit) {
        res = error_response(
            dummy,
            make_error_code(errc::payload_too_large),
            "request header over the limit (" + std::to_string(HEADER_LIMIT) + " bytes)");
    } else if (
        ec.category() == http::make_error_code(http::error::bad_method).category()
        && ec != http::error::end_of_stream && ec != http::error::partial_message) {
        res = error_response(
            dummy, make_error_code(errc::bad_request), "malformed HTTP request: " + ec.message());
    }
    if (res) {
        res->keep_alive(false);
    }
    return res;
}

std::optional<EarlyAnswer> screen_request(
    Server::Impl& s,
    const Request& req,
    std::string_view peer,
    boost::urls::url_view& url,
    Access& granted) {
    auto parsed = boost::urls::parse_origin_form(req.target());
    if (!parsed) {
        return EarlyAnswer{
            error_response(req, make_error_code(errc::bad_request), "malformed request target")};
    }
    url = *parsed;
    if (auto refused = s.guard.check(req, url, peer, s.listener.tls() != nullptr, granted)) {
        const bool keep = refused->keep_alive(); // a refusal honours Connection: close too
        return EarlyAnswer{std::move(*refused), !keep};
    }
    return std::nullopt;
}

std::optional<EarlyAnswer> refuse_stream(
    const Server::Impl& s, const Request& req, const hub::Seat* seat, const std::string& id) {
    if (seat == nullptr) {
        return EarlyAnswer{
            error_response(req, make_error_code(errc::not_found), "no such seat: " + id)};
    }
    if (s.connections->closing()) {
        auto res =
            error_response(req, make_error_code(errc::overloaded), "the server is shutting down");
        res.keep_alive(false);
        return EarlyAnswer{std::move(res), true};
    }
    return std::nullopt;
}

} // namespace sluice::server::session_detail

namespace sluice::server {

template net::awaitable<void> serve_http<beast::tcp_stream>(
    std::shared_ptr<Server::Impl>, beast::tcp_stream, Connections::Ticket);

} // namespace sluice::server
