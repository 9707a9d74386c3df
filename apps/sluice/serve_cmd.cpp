// `sluice serve`: runs the hub (seats, SSE/WebSocket fan-out, the page) until SIGINT/SIGTERM.
#include "archive_pruning.hpp"
#include "commands.hpp"
#include "locations.hpp"
#include "logging.hpp"
#include "serve_agents.hpp"
#include "serve_options.hpp"
#include "settings.hpp"
#include "systemd_notify.hpp"

#include <sluice/cluster/node.hpp>
#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/memory_keeper.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/codex_sessions.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/push/sender.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>
#include <sluice/server/auth.hpp>
#include <sluice/server/server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
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

bool loopback_listen(const std::string& listen) {
    const auto colon = listen.rfind(':');
    std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    boost::system::error_code ec;
    const auto addr = boost::asio::ip::make_address(host.empty() ? "127.0.0.1" : host, ec);
    return !ec && addr.is_loopback();
}

// The owner token: --token, else SLUICE_TOKEN, else the data dir's (created at first start).
// Empty with --no-token. nullopt (after saying why) when it cannot be had.
std::optional<std::string> serve_token(const ServeOptions& o, bool& created) {
    created = false;
    if (o.no_token) {
        if (!loopback_listen(o.listen)) {
            std::fprintf(stderr, "sluice serve: --no-token is allowed on loopback only\n");
            return std::nullopt;
        }
        return std::string();
    }
    if (!o.token.empty()) {
        return o.token;
    }
    if (const char* env = std::getenv("SLUICE_TOKEN"); env != nullptr && *env != '\0') {
        return std::string(env);
    }
    auto t = server::auth::owner_token(o.data, created);
    if (!t) {
        std::fprintf(
            stderr,
            "sluice serve: cannot read or create the token in %s: %s\n",
            o.data.c_str(),
            t.error().message().c_str());
        return std::nullopt;
    }
    return *t;
}

/// Fixes glibc's mmap and trim thresholds for the hub's life. By default both are dynamic: once a
/// large mmapped block is freed, the mmap threshold rises to its size (up to 32 MiB) and the trim
/// threshold to twice that, so the next blocks of that size come from an arena's heap, and the
/// free top of a thread arena's heap is kept (free trims it only past the trim threshold, and
/// malloc_trim never shrinks a thread arena's top). Measured (bench/edges_rss.py `oversize`,
/// bench/RESULTS.md): after a 12 MB tool result, in 2 runs of 5 a thread arena kept ~12.6 MiB
/// resident at its top, and a malloc_trim(0) then did not hand it back. Fixed thresholds
/// (mallopt turns the dynamic ones off): a block over FRAME_INLINE_MAX_BYTES (a window page, an
/// oversize frame's parse: made once per window front or per oversize frame, where a mmap costs
/// little beside filling megabytes) is mmapped and handed back when freed; frames held inline
/// come from the arenas as before. A heap's free top over TRIM_THRESHOLD is given back, and a heap
/// grows by its request and TOP_PAD: each thread arena's top is resident up to that much, and
/// a hub has a handful of arenas (its I/O threads, the store, the indexer), a fixed cost that
/// counts against a single seat's window (bench/window_rss.py at 1 seat, issue 31: 512 KiB
/// kept a thread arena's ~400 KiB top after a burst; the fan-out rate is the same at 128 KiB).
void fix_malloc_thresholds() {
#if defined(__GLIBC__)
    constexpr int MMAP_THRESHOLD = static_cast<int>(FRAME_INLINE_MAX_BYTES);
    constexpr int TRIM_THRESHOLD = 128 * 1024;
    constexpr int TOP_PAD = 64 * 1024;
    (void)::mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD); // advice: a failure leaves the defaults
    (void)::mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    (void)::mallopt(M_TOP_PAD, TOP_PAD);
#endif
}

/// Descriptors kept for everything but client connections: the listener, the log, the
/// reserve, transcripts and agent pipes of the first seats. Basis: a seat costs 2 (its
/// transcript and index), a process agent 3 more (its pipes); 64 covers a dozen agent seats.
constexpr std::uint64_t FD_RESERVE = 64;

/// Raises the soft RLIMIT_NOFILE to the hard limit, and returns the connections it allows:
/// the limit less FD_RESERVE and 2 descriptors per restored seat.
std::size_t descriptor_budget(std::size_t seats) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return ~std::size_t{0};
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rlimit raised = rl;
        raised.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            spdlog::info("descriptors: soft limit raised {} -> {}", rl.rlim_cur, rl.rlim_max);
            rl = raised;
        }
    }
    const std::uint64_t keep = FD_RESERVE + 2 * static_cast<std::uint64_t>(seats);
    if (rl.rlim_cur == RLIM_INFINITY) {
        return ~std::size_t{0};
    }
    return rl.rlim_cur > keep ? static_cast<std::size_t>(rl.rlim_cur - keep) : 1;
}

// The hub's configuration from the flags: the data dir, the window, and the agent factory.
hub::HubConfig hub_config(const ServeOptions& o) {
    hub::HubConfig hc;
    hc.data_dir = o.data;
    if (o.window_cap > 0 || o.window_cap_bytes > 0) {
        hc.budget = Budget::scaled(
            o.window_cap > 0 ? o.window_cap : CONVERSATION_CAP,
            o.window_cap_bytes > 0 ? o.window_cap_bytes : CONVERSATION_CAP_BYTES);
    }
    hc.search_index = std::filesystem::path(o.data) / "search.db"; // a cache: rebuilt when lost
    if (!o.prices.empty()) {
        std::string why;
        hc.prices = hub::PriceTable::load(o.prices, why);
        if (!hc.prices) {
            throw std::runtime_error("--prices: " + why); // start-up: the hub does not start
        }
    }
    hc.limits = std::make_shared<hub::SpendLimits>(
        o.daily_budget_usd > 0 ? std::optional<double>(o.daily_budget_usd) : std::nullopt);
    hc.make_agent = agent_factory(o, hc.limits, hc.prices ? hc.prices : hub::PriceTable::shipped());
    return hc;
}

// --claude-projects folders; an empty value is ~/.claude/projects.
std::vector<std::filesystem::path> claude_projects_dirs(const std::vector<std::string>& given) {
    std::vector<std::filesystem::path> dirs;
    for (const auto& d : given) {
        if (!d.empty()) {
            dirs.emplace_back(d);
            continue;
        }
        const char* home = std::getenv("HOME");
        dirs.emplace_back(std::filesystem::path(home != nullptr ? home : ".") / ".claude/projects");
    }
    return dirs;
}

// --codex-sessions folders; an empty value is where codex writes them: $CODEX_HOME/sessions,
// else ~/.codex/sessions.
std::vector<std::filesystem::path> codex_sessions_dirs(const std::vector<std::string>& given) {
    std::vector<std::filesystem::path> dirs;
    for (const auto& d : given) {
        if (!d.empty()) {
            dirs.emplace_back(d);
            continue;
        }
        const char* codex_home = std::getenv("CODEX_HOME");
        const char* home = std::getenv("HOME");
        dirs.emplace_back(
            codex_home != nullptr && *codex_home != '\0'
                ? std::filesystem::path(codex_home) / "sessions"
                : std::filesystem::path(home != nullptr ? home : ".") / ".codex/sessions");
    }
    return dirs;
}

// Why the server could not start, on stderr.
void print_start_error(const ServeOptions& o, const boost::system::error_code& ec) {
    if (!o.tls_cert.empty() && ec.category() != error_category()) {
        std::fprintf(
            stderr,
            "sluice serve: cannot start on %s with TLS certificate %s and key %s: %s\n",
            o.listen.c_str(),
            o.tls_cert.c_str(),
            o.tls_key.c_str(),
            ec.message().c_str());
    } else if (ec == make_error_code(errc::unauthorized)) {
        std::fprintf(
            stderr, "sluice serve: listening beyond loopback needs --token or SLUICE_TOKEN\n");
    } else {
        std::fprintf(
            stderr,
            "sluice serve: cannot listen on %s: %s\n",
            o.listen.c_str(),
            ec.message().c_str());
    }
}

// The server's configuration from the flags; --max-connections is clamped to what the
// descriptor limit leaves after `seats` seats.
// The warning names --max-connections only when someone set it; the default is clamped quietly.
server::ServerConfig server_config(
    const ServeOptions& o, const Settings& settings, const std::string& token, std::size_t seats) {
    server::ServerConfig sc;
    sc.listen = o.listen;
    sc.max_connections = o.max_connections;
    if (const auto budget = descriptor_budget(seats); budget < sc.max_connections) {
        if (settings.given("max-connections")) {
            spdlog::warn(
                "--max-connections {} is above what the descriptor limit allows; using {} "
                "(raise `ulimit -n` for more)",
                sc.max_connections,
                budget);
        } else {
            spdlog::info(
                "connections at most: {} (the descriptor limit's; raise `ulimit -n` for more)",
                budget);
        }
        sc.max_connections = budget;
    }
    sc.header_timeout = std::chrono::milliseconds(o.header_timeout_ms);
    sc.write_timeout = std::chrono::milliseconds(o.write_timeout_ms);
    sc.token = token;
    sc.token_dir = o.data;
    sc.allow_hosts = o.allow_hosts;
    sc.allow_origins = o.allow_origins;
    sc.public_url = o.public_url;
    sc.auth_free_failures = o.auth_free_failures;
    sc.tls_cert = o.tls_cert;
    sc.tls_key = o.tls_key;
    sc.behind_proxy = o.behind_proxy;
    sc.agent_kinds = agent_kinds(o);
    sc.workspace_root = workspace_root(o).string();
    return sc;
}

int run_serve(ServeOptions o, const Settings& settings) {
    if (LogFormat lf{}; parse_log_format(o.log_format, lf)) {
        configure_logging(lf); // before the first log line
    }
    fix_malloc_thresholds(); // before the first thread (and its arena) starts
    // Freed heap pages go back to the system once they pile up (a window's cut front, a burst's
    // buffers): the hub's resident memory follows what its windows hold, not its peak.
    const auto keeper = MemoryKeeper::glibc(std::chrono::seconds(2));
    (void)descriptor_budget(0); // raise the soft limit before any seat opens its files
    // Under a socket unit systemd passed the listener: serve on it (its address is the listen
    // address from here on, for the loopback checks, the printed URL and hub.json).
    std::string activation_why;
    const auto activated = activated_listener(activation_why);
    if (!activated) {
        std::fprintf(stderr, "sluice serve: %s\n", activation_why.c_str());
        return 2;
    }
    if (activated->fd >= 0) {
        o.listen = activated->address;
    }
    {
        std::error_code ec;
        const bool made = std::filesystem::create_directories(o.data, ec);
        if (ec) {
            std::fprintf(
                stderr,
                "sluice serve: cannot create the data dir %s: %s\n",
                o.data.c_str(),
                ec.message().c_str());
            return 2;
        }
        if (made) { // a data dir this hub makes is its user's alone (tokens, transcripts)
            std::filesystem::permissions(
                o.data,
                std::filesystem::perms::owner_all,
                std::filesystem::perm_options::replace,
                ec);
        }
    }
    // One hub per data dir: a second one would interleave writes to the same transcripts.
    std::string locked_why;
    const auto lock = HubLock::acquire(o.data, locked_why);
    if (!lock) {
        std::fprintf(stderr, "sluice serve: %s\n", locked_why.c_str());
        return 1;
    }
    bool created = false;
    const auto token = serve_token(o, created);
    if (!token) {
        return 2;
    }
    boost::asio::io_context io;
    // Registered before anything is printed or served: a SIGINT/SIGTERM from here on is queued by
    // the signal_set until its wait below (a signal right after "listening on" shuts down
    // cleanly instead of killing the hub with hub.json left behind).
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    hub::HubConfig hc = hub_config(o);
    // The notifier: Web Push to the subscriptions in the data dir (with --redis, the cluster's,
    // in Redis: every node signs with one key and knows every subscription), and --notify-url
    // webhooks, from a thread of its own.
    for (const auto& url : o.notify_urls) {
        if (!push::endpoint_origin(url)) {
            std::fprintf(
                stderr, "sluice serve: --notify-url %s is not an http(s) URL\n", url.c_str());
            return 2;
        }
    }
    push::SenderConfig pc;
    pc.data_dir = o.data;
    pc.vapid_subject = o.vapid_subject;
    pc.public_url = o.public_url;
    pc.webhook_urls = o.notify_urls;
    pc.webhook_secret = o.notify_secret;
    pc.ntfy = o.notify_format == "ntfy";
    pc.shared = cluster_push(o.cluster);
    auto opened = push::NotifySender::open(std::move(pc));
    if (!opened) {
        std::fprintf(stderr, "sluice serve: Web Push: %s\n", opened.error().message.c_str());
        return 2;
    }
    const std::shared_ptr<push::NotifySender> sender = std::move(*opened);
    hc.notifier = sender;
    hc.notify_long_turn = std::chrono::seconds(o.notify_long_turn);

    // --redis: the cluster engine (src/cluster). Without it nothing of it exists.
    auto made = cluster_node(o.cluster, o.data, io, hc);
    if (!made) {
        return 2;
    }
    const std::shared_ptr<cluster::Node> node = std::move(*made);
    hub::Hub hub(io, std::move(hc));
    // Commands other nodes forward for this node's seats run through this node's API (the
    // server, once it exists; until then they get "starting").
    std::atomic<server::Server*> forward_to{nullptr};
    if (node) {
        node->on_forwarded([&forward_to](hub::ForwardedRequest req, hub::ForwardDone done) {
            if (auto* srv = forward_to.load()) {
                srv->handle_forwarded(std::move(req), std::move(done));
            } else {
                done(0, "the owner node is starting");
            }
        });
        if (auto why = node->start(hub, std::chrono::seconds(3))) {
            std::fprintf(stderr, "sluice serve: --redis: %s\n", why->c_str());
            return 2;
        }
    }
    // With shared seats a node hosts only the seats whose lease it holds: it claims its own at
    // its first tick, and the others' once their leases ran out (src/cluster/node_takeover.cpp).
    const auto restored = o.cluster.shared_seats.empty() ? hub.restore() : 0;
    ArchivePruning pruning(io, hub, o.retain_archives_days);
    pruning.start();
    std::optional<hub::ClaudeProjects> projects;
    if (!o.claude_projects.empty()) {
        auto dirs = claude_projects_dirs(o.claude_projects);
        projects.emplace(io, hub, std::move(dirs));
        const auto listed = projects->start();
        std::printf("claude sessions listed: %zu\n", listed);
    }
    std::optional<hub::CodexSessions> rollouts;
    if (!o.codex_sessions.empty()) {
        rollouts.emplace(io, hub, codex_sessions_dirs(o.codex_sessions));
        const auto listed = rollouts->start();
        std::printf("codex sessions listed: %zu\n", listed);
    }
    server::ServerConfig sc = server_config(o, settings, *token, hub.stats().seats);
    if (o.tls_cert.empty() != o.tls_key.empty()) {
        std::fprintf(stderr, "sluice serve: --tls-cert and --tls-key go together\n");
        return 2;
    }
    sc.forwarder = node;
    sc.push = sender;
    sc.listen_fd = activated->fd;
    server::Server srv(io, hub, sc);
    forward_to = &srv;
    if (auto r = srv.start(); !r) {
        print_start_error(o, r.error());
        return 2;
    }
    const std::string listen_host = srv.host(); // the bound one (an adopted socket's too)
    const char* scheme = srv.tls() ? "https" : "http";
    std::printf("listening on %s://%s:%u\n", scheme, listen_host.c_str(), srv.port());
    if (!srv.tls() && !loopback_listen(o.listen) && !o.behind_proxy) {
        std::printf(
            "warning: listening beyond loopback without TLS: the token crosses the network in "
            "clear (--tls-cert/--tls-key, or --behind-proxy when a TLS proxy is in front)\n");
    }
    {
        // The page's addresses, once: with the token in their fragment (never sent to a server;
        // the page keeps it and cleans the address bar). For a wildcard listen, each address of
        // this machine; hub.json tells the CLI where this hub is (and token new what to print).
        HubFile hf;
        hf.pages = page_addresses(scheme, listen_host, srv.port(), o.public_url);
        hf.url = page_addresses(scheme, listen_host, srv.port(), {}).back();
        hf.public_url = o.public_url;
        hf.pid = static_cast<long>(::getpid());
        hf.started = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
        (void)write_hub_file(o.data, hf); // warned on failure; `--hub` still finds the hub
        for (const auto& page : hf.pages) {
            if (token->empty()) {
                std::printf("page: %s/\n", page.c_str());
            } else {
                std::printf("page: %s/#token=%s\n", page.c_str(), token->c_str());
            }
        }
        if (token->empty()) {
            std::printf(
                "no token (--no-token): anyone who can reach %s can use this hub\n",
                hf.pages.front().c_str());
        } else if (created) {
            std::printf(
                "a new token was written to %s/%s (the CLI reads it from there)\n",
                o.data.c_str(),
                std::string(server::auth::OWNER_TOKEN_FILE).c_str());
        }
    }
    std::printf(
        "seats restored: %zu, data in %s, provider %s\n",
        restored,
        o.data.c_str(),
        o.runtime.provider.c_str());
    std::fflush(stdout);
    SystemdNotifier systemd(io); // READY=1 once io runs the accept loop; watchdog pings
    systemd.ready("listening on " + listen_host + ":" + std::to_string(srv.port()));

    // Two-phase shutdown (STYLE.md): stop accepting and end every stream after what is queued
    // (the server flushes its streams; the hub cancels turns and syncs transcripts), wait for
    // the connections to drain, at most the grace deadline, then stop the context.
    // A file size limit (RLIMIT_FSIZE) is a failed write (EFBIG: the seat degrades), not death.
    std::signal(SIGXFSZ, SIG_IGN);
    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec) {
            return;
        }
        spdlog::info("shutting down ({})", sig == SIGINT ? "SIGINT" : "SIGTERM");
        systemd.stopping();
        // The server first, so its streams end as "shutting down" (not "seat closed"); the
        // seats' closes are posted before `done` can run, so they happen before the stop.
        srv.shutdown(SHUTDOWN_GRACE, [&io](std::size_t open) {
            if (open > 0) {
                spdlog::warn("stopping with {} connection(s) still open", open);
            }
            io.stop();
        });
        if (projects) {
            projects->stop();
        }
        if (rollouts) {
            rollouts->stop();
        }
        hub.shutdown();
        if (node) {
            node->stop();
        }
    });
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < o.threads; ++i) {
        threads.emplace_back([&io] { io.run(); });
    }
    io.run();
    for (auto& t : threads) {
        t.join();
    }
    sender->stop(); // what is queued is dropped; a delivery in flight is cancelled
    remove_hub_file(o.data);
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
    add_serve_options(*sub, *o);
    on_selected(sub, [sub, o] {
        Settings settings;
        if (!resolve_serve_options(*sub, *o, settings, true)) {
            return 2;
        }
        return run_serve(*o, settings);
    });
}

} // namespace sluice::app
