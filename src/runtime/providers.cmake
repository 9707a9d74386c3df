# Sources of the providers half of sluice::runtime (see CMakeLists.txt beside this file): the
# shared HTTP/SSE provider shell, anthropic, openai, scripted, and make_provider.
list(APPEND SLUICE_RUNTIME_SOURCES
    providers/provider.cpp
    providers/sse_request.cpp
    providers/anthropic.cpp
    providers/openai.cpp
    providers/scripted.cpp)
