// `sluice serve`: runs the hub (seats, SSE/WebSocket fan-out, the page) until SIGINT/SIGTERM.
#include "commands.hpp"
#include "runtime_flags.hpp"

#include <sluice/hub/hub.hpp>
#include <sluice/runtime/agent.hpp>
#include <sluice/server/server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

namespace sluice::app {

namespace {

/// How long shutdown waits for connections to drain after asking them to end. Streams end
/// after what is queued; a client that does not read its last bytes for this long is cut.
constexpr std::chrono::milliseconds SHUTDOWN_GRACE{3000};

std::map<const CLI::App*, std::function<int()>>& actions() {
    static std::map<const CLI::App*, std::function<int()>> a;
    return a;
}

struct ServeOptions {
    std::string listen{"127.0.0.1:8420"};
    std::string data{"sluice-data"};
    RuntimeFlags runtime;
    std::string token;
    std::size_t threads{2};
    std::uint64_t window_cap{0};
    std::uint64_t window_cap_bytes{0};
    std::size_t max_connections{20'000};
    std::uint64_t header_timeout_ms{10'000};
};

int run_serve(const ServeOptions& o) {
    const runtime::RuntimeConfig rc = runtime_config(o.runtime);
    const bool has_agent_cmd = !o.runtime.agent_cmd.empty();
    const runtime::ProcessAgentConfig pc =
        has_agent_cmd ? process_agent_config(o.runtime) : runtime::ProcessAgentConfig{};
    boost::asio::io_context io;

    hub::HubConfig hc;
    hc.data_dir = o.data;
    if (o.window_cap > 0 || o.window_cap_bytes > 0) {
        hc.budget = Budget::scaled(
            o.window_cap > 0 ? o.window_cap : CONVERSATION_CAP,
            o.window_cap_bytes > 0 ? o.window_cap_bytes : CONVERSATION_CAP_BYTES);
    }
    // Each agent runs on its seat's strand (the hub passes it): its turns and sink calls run
    // there, one at a time. A missing flag or a bad setting is a reason (the seat is
    // unavailable), never an exception out of the factory.
    hc.make_agent = [rc, pc, has_agent_cmd](
                        const hub::SeatSpec& spec,
                        std::vector<boost::json::object> rows,
                        const boost::asio::any_io_executor& ex) -> hub::AgentOrReason {
        if (spec.agent == "process") {
            if (!has_agent_cmd) {
                return {nullptr, "agent kind 'process' needs the hub to run with --agent-cmd"};
            }
            return {runtime::make_process_agent(ex, pc), {}};
        }
        auto cfg = rc;
        if (!spec.model.empty()) {
            cfg.model = spec.model;
        }
        if (!spec.system.empty()) {
            cfg.system_prompt = spec.system;
        }
        try {
            return {runtime::make_builtin_agent(ex, std::move(cfg), std::move(rows)), {}};
        } catch (const std::invalid_argument& e) {
            return {nullptr, e.what()};
        }
    };

    hub::Hub hub(io, std::move(hc));
    const auto restored = hub.restore();
    server::ServerConfig sc;
    sc.listen = o.listen;
    sc.max_connections = o.max_connections;
    sc.header_timeout = std::chrono::milliseconds(o.header_timeout_ms);
    const char* env_token = std::getenv("SLUICE_TOKEN"); // read once: the analyzer cannot pair two
    sc.token = o.token.empty() ? (env_token != nullptr ? env_token : "") : o.token;
    server::Server srv(io, hub, sc);
    if (auto r = srv.start(); !r) {
        if (r.error() == make_error_code(errc::unauthorized)) {
            std::fprintf(
                stderr, "sluice serve: listening beyond loopback needs --token or SLUICE_TOKEN\n");
        } else {
            std::fprintf(
                stderr,
                "sluice serve: cannot listen on %s: %s\n",
                o.listen.c_str(),
                r.error().message().c_str());
        }
        return 2;
    }
    const auto colon = o.listen.rfind(':');
    std::printf("listening on http://%s:%u\n", o.listen.substr(0, colon).c_str(), srv.port());
    std::printf(
        "seats restored: %zu, data in %s, provider %s\n",
        restored,
        o.data.c_str(),
        o.runtime.provider.c_str());
    std::fflush(stdout);

    // Two-phase shutdown (STYLE.md): stop accepting and end every stream after what is queued
    // (the server flushes its streams; the hub cancels turns and syncs transcripts), wait for
    // the connections to drain, at most the grace deadline, then stop the context.
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec) {
            return;
        }
        spdlog::info("shutting down ({})", sig == SIGINT ? "SIGINT" : "SIGTERM");
        // The server first, so its streams end as "shutting down" (not "seat closed"); the
        // seats' closes are posted before `done` can run, so they happen before the stop.
        srv.shutdown(SHUTDOWN_GRACE, [&io](std::size_t open) {
            if (open > 0) {
                spdlog::warn("stopping with {} connection(s) still open", open);
            }
            io.stop();
        });
        hub.shutdown();
    });
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < o.threads; ++i) {
        threads.emplace_back([&io] { io.run(); });
    }
    io.run();
    for (auto& t : threads) {
        t.join();
    }
    return 0;
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
        for (const auto* inner : sub->get_subcommands()) {
            auto jt = actions().find(inner);
            if (jt != actions().end()) {
                return jt->second();
            }
        }
    }
    return 2;
}

void add_serve_command(CLI::App& app) {
    auto* sub =
        app.add_subcommand("serve", "Run the hub: seats, SSE and WebSocket fan-out, the page");
    auto o = std::make_shared<ServeOptions>();
    sub->add_option("--listen", o->listen, "address:port to listen on (port 0: any free port)");
    sub->add_option("--data", o->data, "data directory (one folder per seat)");
    add_runtime_flags(*sub, o->runtime);
    sub->add_option("--token", o->token, "bearer token (or SLUICE_TOKEN); required off loopback");
    sub->add_option("--threads", o->threads, "I/O threads")->check(CLI::Range(1, 64));
    sub->add_option("--window-cap", o->window_cap, "window cap in frames (slack = cap/4)");
    sub->add_option(
        "--window-cap-bytes", o->window_cap_bytes, "window cap in wire bytes (slack = cap/4)");
    sub->add_option(
        "--max-connections", o->max_connections, "open connections at most (more get 503)");
    sub->add_option(
        "--header-timeout-ms", o->header_timeout_ms, "slow-header guard in milliseconds");
    on_selected(sub, [o] { return run_serve(*o); });
}

} // namespace sluice::app
