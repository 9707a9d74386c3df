# Unit tests of sluice::core.
list(APPEND SLUICE_TEST_SOURCES
    unit/core/cancel_test.cpp
    unit/core/clock_test.cpp
    unit/core/event_test.cpp
    unit/core/file_read_test.cpp
    unit/core/histogram_test.cpp
    unit/core/memory_keeper_test.cpp
    unit/core/relay_queue_test.cpp
    unit/core/relay_test.cpp
    unit/core/relay_async_test.cpp
    unit/core/safe_write_test.cpp
    unit/core/utf8_test.cpp)
