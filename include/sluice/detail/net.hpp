// Namespace aliases for Asio and Beast, shared by every module (STYLE.md: no namespace `http`).
#pragma once

// Header-only by design: namespace aliases.

// Declared, not included: an alias needs only the namespaces, and this header stays free.
namespace boost::asio::ip {
class tcp;
} // namespace boost::asio::ip

namespace boost::asio::ssl {} // namespace boost::asio::ssl

namespace boost::beast::http {} // namespace boost::beast::http

namespace boost::beast::websocket {} // namespace boost::beast::websocket

namespace sluice {
namespace net = boost::asio;                   ///< Asio
namespace ssl = boost::asio::ssl;              ///< Asio's TLS streams and contexts
namespace beast = boost::beast;                ///< Beast
namespace http = boost::beast::http;           ///< Beast's HTTP/1.1
namespace websocket = boost::beast::websocket; ///< Beast's WebSocket
using tcp = boost::asio::ip::tcp;              ///< TCP endpoints, sockets and acceptors
} // namespace sluice
