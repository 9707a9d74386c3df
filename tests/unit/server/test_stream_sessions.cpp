// The server's sessions instantiated for beast::test::stream (the failure matrix's transport),
// and Beast's test-stream sources, compiled once (the build uses separate compilation).
#include "test_stream_sessions.hpp"

#include "server/http_session_impl.hpp"
#include "server/streams_impl.hpp"

#include <boost/beast/_experimental/test/detail/stream_state.ipp>
#include <boost/beast/_experimental/test/impl/error.ipp>
#include <boost/beast/_experimental/test/impl/fail_count.ipp>

namespace sluice::server {

template net::awaitable<void> serve_http<beast::test::stream>(
    std::shared_ptr<Server::Impl>, beast::test::stream, Connections::Ticket);

} // namespace sluice::server
