# Unit tests of sluice::hub: one file per public header (seat tests run on a real io_context with
# a fake agent, see hub_test_support.hpp).
list(APPEND SLUICE_TEST_SOURCES
    unit/hub/archives_test.cpp
    unit/hub/backlog_test.cpp
    unit/hub/claude_projects_test.cpp
    unit/hub/codex_sessions_test.cpp
    unit/hub/feed_test.cpp
    unit/hub/file_source_test.cpp
    unit/hub/hooks_test.cpp
    unit/hub/hub_test.cpp
    unit/hub/notify_test.cpp
    unit/hub/journal_test.cpp
    unit/hub/partial_test.cpp
    unit/hub/permission_prompts_test.cpp
    unit/hub/search_index_test.cpp
    unit/hub/search_indexer_test.cpp
    unit/hub/search_text_test.cpp
    unit/hub/seed_test.cpp
    unit/hub/seat_meta_test.cpp
    unit/hub/spend_limits_test.cpp
    unit/hub/seat_test.cpp
    unit/hub/subagents_test.cpp
    unit/hub/subscriber_test.cpp
    unit/hub/turn_close_test.cpp
    unit/hub/turn_durations_test.cpp
    unit/hub/usage_test.cpp
    unit/hub/usage_scanner_test.cpp
    unit/hub/wire_test.cpp
    unit/hub/writer_test.cpp)
list(APPEND SLUICE_TEST_LIBS sluice::hub sluice::cluster) # hub_test: a released seat leaves a mirror
