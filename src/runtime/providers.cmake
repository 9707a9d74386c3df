# Sources of the providers half of sluice::runtime (see CMakeLists.txt beside this file).
list(APPEND SLUICE_RUNTIME_SOURCES
    sse.cpp)
