// Lookup over the embedded page's files (the files themselves are in the generated
// web_assets_data.cpp).
#include <sluice/server/web_assets.hpp>

namespace sluice::web {

const Asset* find_asset(std::string_view path) {
    if (path == "/") {
        path = "/index.html";
    }
    for (const Asset& a : assets()) {
        if (a.path == path) {
            return &a;
        }
    }
    return nullptr;
}

} // namespace sluice::web
