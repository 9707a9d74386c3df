# The committed fuzz corpora as regression tests in sluice_tests (fuzz/corpus_test.cpp), built
# by every preset that builds the tests: each target's source compiled into the test binary with
# its entry point renamed, so the six can live in one program.
set(_fuzz_targets sse transcript_line stream_json ws_op cursor http_request)
list(APPEND SLUICE_TEST_SOURCES ${PROJECT_SOURCE_DIR}/fuzz/corpus_test.cpp)
foreach(t ${_fuzz_targets})
    set(src ${PROJECT_SOURCE_DIR}/fuzz/${t}_fuzz.cpp)
    list(APPEND SLUICE_TEST_SOURCES ${src})
    set_source_files_properties(${src} PROPERTIES
        COMPILE_DEFINITIONS LLVMFuzzerTestOneInput=sluice_fuzz_${t})
endforeach()
