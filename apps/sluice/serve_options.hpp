// The flags of `sluice serve` (and of `sluice config show`, which takes the same): one struct, one
// registration, so a flag, its config file key and its environment variable never disagree.
#pragma once

#include "cluster_flags.hpp"
#include "runtime_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::app {

class Settings;

/// Every flag of `sluice serve` (each also a config file key and a SLUICE_<FLAG> variable).
struct ServeOptions {
    std::string listen{"127.0.0.1:8420"};
    std::string config; // --config: the config file (else SLUICE_CONFIG, else the standard one)
    std::string data;   // --data; empty: resolve_data_dir() (locations.hpp)
    RuntimeFlags runtime;
    std::string token;
    bool no_token{false};
    std::vector<std::string> allow_hosts;
    std::vector<std::string> allow_origins;
    std::string public_url;
    unsigned auth_free_failures{8};
    std::string tls_cert;
    std::string tls_key;
    bool behind_proxy{false};
    std::size_t threads{2};
    std::uint64_t window_cap{0};
    std::uint64_t window_cap_bytes{0};
    std::size_t max_connections{20'000};
    std::uint64_t header_timeout_ms{10'000};
    std::string workspace_root; // claude seats' working directories lie inside (default: data)
    std::uint64_t write_timeout_ms{30'000};
    ClusterFlags cluster; // --redis and the flags that go with it (cluster_flags.hpp)
    std::vector<std::string> claude_projects; // Claude Code projects folders served read-only
    std::vector<std::string> codex_sessions;  // Codex sessions folders served read-only
    std::vector<std::string> acp_agents;      // ACP agent command lines a seat may name
    std::uint64_t retain_archives_days{0};    // prune reset archives and removed seats (0: keep)
    std::string log_format{"text"};           // text | json (logging.hpp)
    std::string prices; // usage price table (JSON; empty: the shipped one, src/hub/prices.json)
    std::vector<std::string> notify_urls; // webhooks told of events that need a person
    std::string notify_secret;            // HMAC-SHA256 key of X-Sluice-Signature
    std::string notify_format{"json"};    // json | ntfy
    std::uint64_t notify_long_turn{30};   // seconds: a longer turn notifies when it ends
    std::string vapid_subject{"mailto:sluice@localhost"}; // VAPID `sub`: a contact
    double daily_budget_usd{0}; // what hosted seats may spend per day (UTC) in all; 0: no limit
};

/// Adds every serve flag to `sub`, bound to `o`, and `--config FILE`.
void add_serve_options(CLI::App& sub, ServeOptions& o);

/// After `sub` parsed: fills what the flags left from SLUICE_<FLAG> and the config file
/// (Settings), then resolves the data dir (`notice`: say so when an earlier version's is used).
/// @return false after one line on stderr (exit 2).
bool resolve_serve_options(CLI::App& sub, ServeOptions& o, Settings& settings, bool notice);

} // namespace sluice::app
