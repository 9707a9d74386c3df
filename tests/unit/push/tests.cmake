# Unit tests of sluice::push: RFC 8291's worked example, VAPID, the key file, the sender.
list(APPEND SLUICE_TEST_SOURCES
    unit/push/sender_test.cpp
    unit/push/web_push_test.cpp)
if(NOT "support/push_service.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES support/push_service.cpp)
endif()
if(NOT "unit/conversation/fixtures.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES unit/conversation/fixtures.cpp) # TempDir
endif()
list(APPEND SLUICE_TEST_LIBS sluice::push OpenSSL::Crypto)
