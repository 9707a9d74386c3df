# Unit tests of sluice::redis: RESP encoding and reading, URLs, and the client against a real
# redis-server started by the test (tests/support/redis_process).
list(APPEND SLUICE_TEST_SOURCES
    support/redis_process.cpp
    unit/redis/resp_test.cpp
    unit/redis/client_test.cpp)
if(NOT "support/test_certs.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES support/test_certs.cpp) # client_test: rediss://
endif()
if(NOT "unit/conversation/fixtures.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES unit/conversation/fixtures.cpp) # TempDir
endif()
list(APPEND SLUICE_TEST_LIBS sluice::redis)
