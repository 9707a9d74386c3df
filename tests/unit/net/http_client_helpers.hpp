// Test support for the HTTP client's tests: options that retry fast, and one request run to
// completion on its own io_context.
#pragma once

#include "support/run_async.hpp"

#include <sluice/core/cancel.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/net/http_client.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>

namespace sluice::test {

// Runs one request to completion on a fresh single-threaded io_context (the coroutine form).
inline boost::system::result<transport::HttpResponse> request(
    transport::HttpClient& client,
    transport::HttpRequest req,
    CancellationToken cancel,
    transport::BodyCallback on_body) {
    net::io_context io;
    return run_async(
        io, [&] { return client.request(std::move(req), std::move(cancel), std::move(on_body)); });
}

/// No proxy, quick backoff, three attempts.
inline transport::HttpOptions fast_options() {
    using namespace std::chrono_literals;
    transport::HttpOptions o;
    o.proxy = "";
    o.backoff_initial = 1ms;
    o.backoff_max = 5ms;
    o.max_attempts = 3;
    return o;
}

} // namespace sluice::test
