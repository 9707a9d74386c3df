# Precompiled headers for the sanitizer builds of `make test` (the asan and tsan presets turn
# them on): the standard, Boost.JSON and Asio headers that most sources parse, spdlog where the
# target uses its compiled library, gtest in the test binary. Measured per source in
# bench/RESULTS.md, "CI time": a coroutine-heavy source compiles in ~30 % less CPU, a small one
# pays ~0.3 s to load the header. Off elsewhere, so the dev build (and clang-tidy on its
# compile database) still proves every source includes what it uses; the header check target
# never gets them: each public header must compile alone.
option(SLUICE_PRECOMPILE_HEADERS "Precompile the common third-party headers" OFF)

set(SLUICE_PCH_COMMON
    <algorithm> <array> <atomic> <chrono> <coroutine> <cstdint> <deque> <exception>
    <filesystem> <functional> <map> <memory> <mutex> <optional> <span> <string>
    <string_view> <unordered_map> <utility> <variant> <vector>
    <boost/json.hpp> <boost/system/error_code.hpp> <boost/system/result.hpp>
    <boost/asio/any_io_executor.hpp> <boost/asio/as_tuple.hpp> <boost/asio/awaitable.hpp>
    <boost/asio/co_spawn.hpp> <boost/asio/detached.hpp> <boost/asio/dispatch.hpp>
    <boost/asio/io_context.hpp> <boost/asio/ip/tcp.hpp> <boost/asio/post.hpp>
    <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp> <boost/asio/use_awaitable.hpp>)

# sluice_precompile_headers(<target> [SPDLOG] [GTEST] [HEADERS <header>...]): the common set and
# the named extras, precompiled for <target> alone (its own flags and definitions).
# spdlog only where the target links spdlog::spdlog: without SPDLOG_COMPILED_LIB its headers
# are the header-only library, and GCC then emits all of it in every source (a 2 s test
# source took 18 s).
function(sluice_precompile_headers target)
    if(NOT SLUICE_PRECOMPILE_HEADERS)
        return()
    endif()
    cmake_parse_arguments(PARSE_ARGV 1 arg "SPDLOG;GTEST" "" "HEADERS")
    set(headers ${SLUICE_PCH_COMMON} ${arg_HEADERS})
    if(arg_SPDLOG)
        list(APPEND headers <spdlog/spdlog.h>)
    endif()
    if(arg_GTEST)
        list(APPEND headers <gtest/gtest.h>)
    endif()
    target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
