# Unit tests of sluice::net: the SSE parser and the HTTP client (against the loopback stub).
list(APPEND SLUICE_TEST_SOURCES
    support/stub_provider.cpp
    unit/net/sse_test.cpp
    unit/net/http_client_test.cpp
    unit/net/http_client_proxy_test.cpp)
list(APPEND SLUICE_TEST_LIBS sluice::net)
