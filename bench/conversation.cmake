# Benchmarks of sluice::conversation (frames, the window, transcript appends).
list(APPEND SLUICE_BENCH_SOURCES conversation_bench.cpp row_scan_bench.cpp)
list(APPEND SLUICE_BENCH_LIBS sluice::conversation)
