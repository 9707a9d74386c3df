# The page's browser end-to-end tests, registered with CTest (include()d from tests/CMakeLists.txt):
# one entry per test file, each its own hub(s) and Chromium; RUN_SERIAL, as Chromium is heavy.
foreach(_web_test
        "BrowserEndToEnd=browser.test.mjs"
        "SeatControls=seat-controls.test.mjs"
        "ClaudeSessions=claude-sessions.test.mjs"
        "Push=push.test.mjs"
        "Usage=usage.test.mjs"
        "Search=search.test.mjs")
    string(REGEX REPLACE "=.*$" "" _name "${_web_test}")
    string(REGEX REPLACE "^[^=]*=" "" _file "${_web_test}")
    add_test(NAME WebPage.${_name}
        COMMAND ${PROJECT_SOURCE_DIR}/scripts/web-test ${PROJECT_SOURCE_DIR}/web/test/${_file})
    set_tests_properties(WebPage.${_name} PROPERTIES
        ENVIRONMENT "SLUICE_BINARY=$<TARGET_FILE:sluice>;SLUICE_ARTIFACTS_DIR=${PROJECT_BINARY_DIR}/artifacts"
        TIMEOUT 300
        RUN_SERIAL TRUE
        LABELS "browser;e2e")
endforeach()
