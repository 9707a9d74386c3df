// HTTPS, WSS and SSE over TLS: the handshake, then the same sessions over ssl_stream.
#include "http_session_impl.hpp"
#include "tls_stream.hpp"

#include <boost/asio/ssl/error.hpp>
#include <boost/beast/websocket/ssl.hpp>

namespace sluice::server {

net::awaitable<void>
serve_tls(std::shared_ptr<Server::Impl> s, beast::tcp_stream plain, Connections::Ticket ticket) {
    TlsStream stream(std::move(plain), *s->listener.tls());
    // A client that never finishes its handshake is cut like one that never sends its header.
    StreamOps<TlsStream>::expires_after(stream, s->cfg.header_timeout);
    auto [ec] = co_await stream.async_handshake(
        net::ssl::stream_base::server, net::as_tuple(net::use_awaitable));
    if (ec) {
        co_return; // not TLS, or a certificate the client refused: nothing to answer
    }
    co_await serve_http<TlsStream>(std::move(s), std::move(stream), std::move(ticket));
}

template net::awaitable<void>
    serve_http<TlsStream>(std::shared_ptr<Server::Impl>, TlsStream, Connections::Ticket);

} // namespace sluice::server
