# Unit tests of sluice::conversation (and the transcript CLI end to end).
list(APPEND SLUICE_TEST_SOURCES
    unit/conversation/fixtures.cpp
    unit/conversation/frame_test.cpp
    unit/conversation/frame_ref_test.cpp
    unit/conversation/turns_test.cpp
    unit/conversation/window_test.cpp
    unit/conversation/transcript_test.cpp
    unit/conversation/transcript_conformance_test.cpp
    unit/conversation/transcript_count_test.cpp
    unit/conversation/row_scan_test.cpp
    unit/conversation/codex_rollout_test.cpp)
list(APPEND SLUICE_TEST_LIBS sluice::conversation)
list(APPEND SLUICE_TEST_SOURCES e2e/transcript_cli_test.cpp)
