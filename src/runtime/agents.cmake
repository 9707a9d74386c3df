# sluice::runtime sources of the agent half: turn loop, tools, scripted provider, agents, frames.
list(APPEND SLUICE_RUNTIME_SOURCES
    agents/builtin_agent.cpp
    agents/process_agent.cpp
    agents/line_process.cpp
    agents/codex_agent.cpp
    agents/codex_items.cpp
    agents/acp_agent.cpp
    agents/acp_updates.cpp
    agents/rpc_rows.cpp
    agents/control_requests.cpp
    agents/stream_json.cpp
    agents/agent_events.cpp
    agents/agent.cpp
    process/child.cpp
    frame_builder.cpp
    runtime.cpp
    text_util.cpp
    tools/tools.cpp)
