// `sluice serve`: runs the hub (until the hub lands, says what it will be and shows the relay).
#include "commands.hpp"

#include <sluice/core/relay.hpp>

#include <cstdio>
#include <map>
#include <string>

namespace sluice::app {

namespace {
std::map<const CLI::App*, std::function<int()>>& actions() {
    static std::map<const CLI::App*, std::function<int()>> a;
    return a;
}
} // namespace

void on_selected(CLI::App* sub, std::function<int()> action) {
    actions()[sub] = std::move(action);
}

int run_selected(const CLI::App& app) {
    for (const auto* sub : app.get_subcommands()) {
        auto it = actions().find(sub);
        if (it != actions().end()) {
            return it->second();
        }
    }
    return 2;
}

void add_serve_command(CLI::App& app) {
    auto* sub = app.add_subcommand("serve", "Run the hub: seats, SSE and WebSocket fan-out");
    auto listen = std::make_shared<std::string>("127.0.0.1:8420");
    sub->add_option("--listen", *listen, "address:port to listen on");
    on_selected(sub, [listen] {
        std::printf(
            "sluice serve: the hub is not built yet (issue 5); it will listen on %s.\n"
            "The relay is here: %zu-event channel, %zu KiB chunks, %zu KiB retained budget.\n",
            listen->c_str(),
            RELAY_CHANNEL_CAPACITY,
            RELAY_FORWARD_CHUNK_BYTES / 1024,
            RELAY_DELTA_RETAINED_BUDGET_BYTES / 1024);
        return 0;
    });
}

} // namespace sluice::app
