// The web page's files (web/*) and the API's /openapi.json, embedded into the binary at build
// time by web/embed.cmake.
#pragma once

#include <span>
#include <string_view>

namespace sluice::web {

/// One embedded file of the page. Views into static storage: valid for the whole program.
struct Asset {
    std::string_view path;         ///< URL path with its leading slash, e.g. "/app.js"
    std::string_view content_type; ///< Content-Type to send, e.g. "text/javascript; charset=utf-8"
    std::string_view body;         ///< the file's bytes, exactly as in web/ (or its source)
    std::string_view etag;         ///< strong ETag, quoted: a prefix of the bytes' SHA-256
};

/// Every embedded file: the page's in path order, then /vendor/'s, then "/openapi.json" (the
/// API's description, src/server/openapi.json); "/index.html" is the page itself (serve it at
/// "/" too).
///
/// @par Thread safety
/// Safe from any thread (immutable data).
std::span<const Asset> assets();

/// The asset served at URL path `path` ("/" means "/index.html"), or nullptr if there is none.
/// Matches the path exactly (no query string, no decoding, no "..": nothing outside web/ exists).
///
/// @par Thread safety
/// Safe from any thread.
const Asset* find_asset(std::string_view path);

} // namespace sluice::web
