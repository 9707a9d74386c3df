// What the server's sessions need of beast::test::stream: no deadlines, and close() to end.
#pragma once

#include "server/impl.hpp"

#include <boost/beast/_experimental/test/stream.hpp>

namespace sluice::server {

template <>
struct StreamOps<beast::test::stream> {
    static void expires_after(beast::test::stream& /*s*/, std::chrono::milliseconds /*d*/) {}

    static void expires_never(beast::test::stream& /*s*/) {}

    static void shutdown_send(beast::test::stream& s) { s.close(); }

    static void shutdown(beast::test::stream& s) { s.close(); }

    static void cancel(beast::test::stream& s) { s.close(); }
};

extern template net::awaitable<void> serve_http<beast::test::stream>(
    std::shared_ptr<Server::Impl>, beast::test::stream, Connections::Ticket);

} // namespace sluice::server
