// Test helper for the Anthropic provider's tests (anthropic_test.cpp, anthropic_errors_test.cpp):
// the provider pointed at the loopback stub, with quick retries.
#pragma once

#include "provider_harness.hpp"

#include <sluice/runtime/providers/anthropic.hpp>

#include <chrono>
#include <memory>

namespace sluice::test {

/// HTTP options for a stub: no proxy, two attempts, millisecond back-off.
inline transport::HttpOptions anthropic_quick_http() {
    using namespace std::chrono_literals;
    transport::HttpOptions o;
    o.proxy = "";
    o.max_attempts = 2;
    o.backoff_initial = 1ms;
    o.backoff_max = 2ms;
    return o;
}

/// The Anthropic provider against `stub` (key "test-key", model "claude-test").
inline std::unique_ptr<runtime::Provider> anthropic_for(const StubProvider& stub) {
    runtime::ProviderConfig c;
    c.kind = "anthropic";
    c.base_url = stub.base_url();
    c.api_key = "test-key";
    c.model = "claude-test";
    return runtime::make_anthropic_provider(c, anthropic_quick_http());
}

} // namespace sluice::test
