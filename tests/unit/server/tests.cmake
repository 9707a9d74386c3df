# Unit tests of sluice::server: the validator, the error map, the connection gate, and the
# sessions over beast::test::stream with fail_count (the failure matrix).
list(APPEND SLUICE_TEST_SOURCES
    unit/server/access_test.cpp
    unit/server/auth_test.cpp
    unit/server/connections_test.cpp
    unit/server/errors_test.cpp
    unit/server/sessions_test.cpp
    unit/server/test_stream_sessions.cpp
    unit/server/validate_test.cpp)
if(NOT "unit/conversation/fixtures.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES unit/conversation/fixtures.cpp) # TempDir
endif()
list(APPEND SLUICE_TEST_LIBS sluice::server sluice::cluster) # sessions_test: a mirror seat
# The failure matrix instantiates the server's private session templates for test::stream.
include_directories(${PROJECT_SOURCE_DIR}/src)
