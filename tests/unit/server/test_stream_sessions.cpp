// The server's sessions instantiated for beast::test::stream (the failure matrix's transport;
// Beast's test-stream sources are compiled once, in sluice_asio).
#include "test_stream_sessions.hpp"

#include "server/http_session_impl.hpp"
#include "server/streams_impl.hpp"

namespace sluice::server {

template net::awaitable<void> serve_http<beast::test::stream>(
    std::shared_ptr<Server::Impl>, beast::test::stream, Connections::Ticket);

} // namespace sluice::server
