# Unit tests of the providers half of sluice::runtime: SSE parser, HTTP client, anthropic, openai.
list(APPEND SLUICE_TEST_SOURCES
    support/stub_provider.cpp
    unit/runtime/sse_test.cpp
    unit/runtime/http_client_test.cpp
    unit/runtime/anthropic_test.cpp
    unit/runtime/openai_test.cpp)
