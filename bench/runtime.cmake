# Benchmarks of the runtime's provider half: SSE parsing and provider stream decoding.
list(APPEND SLUICE_BENCH_SOURCES runtime_bench.cpp)
list(APPEND SLUICE_BENCH_LIBS sluice::runtime)
# The captured streams in ../shared/fixtures are the workload (sluice_bench is defined later).
cmake_language(DEFER CALL target_compile_definitions sluice_bench PRIVATE
    SLUICE_BENCH_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/../shared/fixtures")
