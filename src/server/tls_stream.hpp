// What the sessions need of a TLS stream (Beast's ssl_stream over tcp_stream): deadlines and
// the ways to end on the TCP layer beneath.
#pragma once

#include "impl.hpp"

#include <boost/beast/ssl/ssl_stream.hpp>

namespace sluice::server {

/// The server's TLS stream.
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <>
struct StreamOps<TlsStream> {
    static void expires_after(TlsStream& s, std::chrono::milliseconds d) {
        beast::get_lowest_layer(s).expires_after(d);
    }

    static void expires_never(TlsStream& s) { beast::get_lowest_layer(s).expires_never(); }

    /// Stops sending on the TCP layer (no close_notify: the peer sees the end of the stream,
    /// which HTTP/1.1 framing makes safe to read as the end).
    static void shutdown_send(TlsStream& s) {
        boost::system::error_code ec;
        beast::get_lowest_layer(s).socket().shutdown(tcp::socket::shutdown_send, ec);
    }

    static void shutdown(TlsStream& s) {
        boost::system::error_code ec;
        beast::get_lowest_layer(s).socket().shutdown(tcp::socket::shutdown_both, ec);
    }

    static void cancel(TlsStream& s) { beast::get_lowest_layer(s).cancel(); }
};

template <>
struct PeerOf<TlsStream> {
    static std::string address(TlsStream& s) { return peer_address(beast::get_lowest_layer(s)); }
};

} // namespace sluice::server
