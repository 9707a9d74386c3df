# Unit tests of the agent half of sluice::runtime (turn loop, tools, scripted provider, frames,
# agents) and the `sluice run` end-to-end test.
list(APPEND SLUICE_TEST_SOURCES
    unit/runtime/scripted_test.cpp
    unit/runtime/runtime_test.cpp
    unit/runtime/tools_test.cpp
    unit/runtime/stream_json_test.cpp
    unit/runtime/agent_events_test.cpp
    unit/runtime/frame_builder_test.cpp
    unit/runtime/agent_test.cpp
    unit/runtime/process_agent_test.cpp
    unit/runtime/codex_agent_test.cpp
    unit/runtime/acp_agent_test.cpp
    unit/runtime/runtime_flood_test.cpp
    e2e/run_cli_test.cpp)
