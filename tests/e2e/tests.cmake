# End-to-end tests of the hub: the real `sluice serve` on 127.0.0.1:0, real HTTP and SSE.
list(APPEND SLUICE_TEST_SOURCES
    e2e/durability_test.cpp
    e2e/hub_test.cpp
    e2e/hub_shutdown_test.cpp
    e2e/hub_ws_test.cpp
    e2e/page_hub_test.cpp
    e2e/openapi_test.cpp
    e2e/claude_test.cpp
    e2e/codex_test.cpp
    e2e/acp_test.cpp
    e2e/claude_reset_test.cpp
    e2e/claude_controls_test.cpp
    e2e/claude_projects_test.cpp
    e2e/claude_subagents_test.cpp
    e2e/claude_long_session_test.cpp
    e2e/codex_sessions_test.cpp
    e2e/usage_test.cpp
    e2e/search_test.cpp
    e2e/budget_test.cpp
    e2e/hooks_test.cpp
    e2e/hooks_install_test.cpp
    e2e/hooks_claude_test.cpp
    e2e/push_test.cpp
    e2e/security_test.cpp
    e2e/security_tls_test.cpp
    e2e/edges_test.cpp
    e2e/edges_connections_test.cpp
    e2e/settings_test.cpp
    e2e/operations_test.cpp
    e2e/redis_cluster_test.cpp
    e2e/redis_cluster_ws_test.cpp
    e2e/redis_cluster_live_test.cpp
    e2e/redis_cluster_tls_test.cpp
    e2e/redis_cluster_takeover_test.cpp
    e2e/redis_cluster_push_test.cpp
    e2e/service_test.cpp
    e2e/systemd_test.cpp
    ${PROJECT_SOURCE_DIR}/apps/sluice/service_units.cpp
    support/hub_process.cpp)
if(NOT "support/test_certs.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES support/test_certs.cpp) # security_tls_test, redis_cluster_test
endif()
if(NOT "support/push_service.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES support/push_service.cpp) # push_test
endif()
if(NOT "support/redis_process.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES support/redis_process.cpp) # redis_cluster_test
endif()
if(NOT "unit/conversation/fixtures.cpp" IN_LIST SLUICE_TEST_SOURCES)
    list(APPEND SLUICE_TEST_SOURCES unit/conversation/fixtures.cpp) # TempDir
endif()
list(APPEND SLUICE_TEST_LIBS sluice::runtime sluice::conversation sluice::push OpenSSL::Crypto)
# The client verbs end to end, in a pseudo-terminal where a terminal matters (Ctrl-C, tail).
add_test(NAME Cli.EndToEnd COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/cli_test.py -v)
set_tests_properties(Cli.EndToEnd PROPERTIES
    ENVIRONMENT "SLUICE_BINARY=$<TARGET_FILE:sluice>"
    TIMEOUT 300
    LABELS "e2e")
# The hook bridge with the real Claude Code, interactive under a pseudo-terminal (its screen read
# through pyte): answered from sluice, from two viewers at once, denied, with the hub down, at the
# hook's timeout, in the terminal first, and from the page in headless Chromium. Exit 77: skipped
# (the pinned Claude Code, pyte or Chromium missing).
add_test(NAME HookBridgeClaude.Interactive
    COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/hooks_pty_test.py -v)
set_tests_properties(HookBridgeClaude.Interactive PROPERTIES
    ENVIRONMENT "SLUICE_BINARY=$<TARGET_FILE:sluice>"
    TIMEOUT 600
    SKIP_RETURN_CODE 77
    LABELS "e2e")
