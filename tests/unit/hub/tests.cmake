# Unit tests of sluice::hub (seat tests run on a real io_context with a fake agent).
list(APPEND SLUICE_TEST_SOURCES
    unit/hub/wire_test.cpp)
list(APPEND SLUICE_TEST_LIBS sluice::hub)
