# The page's browser end-to-end test, registered with CTest (include()d from tests/CMakeLists.txt).
add_test(NAME WebPage.BrowserEndToEnd
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/web-test)
set_tests_properties(WebPage.BrowserEndToEnd PROPERTIES
    ENVIRONMENT "SLUICE_BINARY=$<TARGET_FILE:sluice>;SLUICE_ARTIFACTS_DIR=${PROJECT_BINARY_DIR}/artifacts"
    TIMEOUT 300
    RUN_SERIAL TRUE
    LABELS "browser;e2e")
