# Unit tests of sluice::runtime, listed in two files (see src/runtime/CMakeLists.txt).
include(unit/runtime/providers_tests.cmake OPTIONAL)
include(unit/runtime/agents_tests.cmake OPTIONAL)
list(APPEND SLUICE_TEST_LIBS sluice::runtime)
