# Benchmarks of sluice::hub (the seat's durable path through the writer).
list(APPEND SLUICE_BENCH_SOURCES hub_bench.cpp)
list(APPEND SLUICE_BENCH_LIBS sluice::hub)
