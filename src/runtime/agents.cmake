# sluice::runtime sources of the agent half: turn loop, tools, scripted provider, agents, frames.
list(APPEND SLUICE_RUNTIME_SOURCES
    agent.cpp
    child_process.cpp
    frame_builder.cpp
    process_agent.cpp
    runtime.cpp
    text_util.cpp
    tools.cpp)
