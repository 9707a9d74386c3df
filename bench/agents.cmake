# Benchmarks of the runtime's agent half: the turn loop end to end.
list(APPEND SLUICE_BENCH_SOURCES runtime_loop_bench.cpp)
list(APPEND SLUICE_BENCH_LIBS sluice::runtime)
