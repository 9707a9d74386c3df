# Unit tests of the providers half of sluice::runtime: anthropic, openai, scripted.
list(APPEND SLUICE_TEST_SOURCES
    support/stub_provider.cpp
    unit/runtime/anthropic_test.cpp
    unit/runtime/anthropic_errors_test.cpp
    unit/runtime/openai_test.cpp)
