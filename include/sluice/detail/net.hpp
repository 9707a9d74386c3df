// Namespace aliases for Asio and Beast, shared by every module (STYLE.md: no namespace `http`).
#pragma once

// Header-only by design: namespace aliases.

// Declared, not included: an alias needs only the namespaces, and this header stays free.
namespace boost::asio::ip {
class tcp;
} // namespace boost::asio::ip

namespace boost::beast::http {} // namespace boost::beast::http

namespace sluice {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
} // namespace sluice
