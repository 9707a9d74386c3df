# Sources of the providers half of sluice::runtime (see CMakeLists.txt beside this file).
list(APPEND SLUICE_RUNTIME_SOURCES
    sse.cpp
    http_client.cpp
    http_client_url.cpp
    sse_request.cpp
    anthropic.cpp
    openai.cpp)
# Boost.URL parses provider URLs; the target is created after this file is read, hence DEFER.
cmake_language(DEFER CALL target_link_libraries sluice_runtime PUBLIC Boost::url)
