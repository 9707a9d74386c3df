// The flags of `sluice serve` (serve_options.hpp).
#include "serve_options.hpp"

#include "locations.hpp"
#include "settings.hpp"

namespace sluice::app {

void add_serve_options(CLI::App& sub, ServeOptions& o) {
    // Defaults are captured so `sluice config show` can print them.
    sub.option_defaults()->always_capture_default();
    sub.add_option(
        "--config",
        o.config,
        "config file (TOML; every flag is a key, - written _; default: "
        "$XDG_CONFIG_HOME/sluice/config.toml, or SLUICE_CONFIG). Precedence: file < "
        "SLUICE_<FLAG> environment variables < flags");
    sub.add_option("--listen", o.listen, "address:port to listen on (port 0: any free port)");
    sub.add_option(
        "--data",
        o.data,
        "data directory (one folder per seat; default: $XDG_STATE_HOME/sluice, i.e. "
        "~/.local/state/sluice, or ./sluice-data when an earlier version left one there)");
    add_runtime_flags(sub, o.runtime);
    sub.add_option(
        "--token",
        o.token,
        "owner token (or SLUICE_TOKEN); default: the data dir's, created at first start");
    sub.add_flag("--no-token", o.no_token, "require no token (loopback only; says so at start)");
    sub.add_option("--allow-host", o.allow_hosts, "another name the Host header may carry");
    sub.add_option(
        "--allow-origin", o.allow_origins, "a foreign origin let in (scheme://host[:port], or *)");
    add_cluster_flags(sub, o.cluster);
    sub.add_option(
        "--public-url", o.public_url, "the URL people reach the hub at (its host is allowed)");
    sub.add_option("--tls-cert", o.tls_cert, "PEM certificate chain: serve HTTPS and WSS");
    sub.add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert");
    sub.add_flag(
        "--behind-proxy",
        o.behind_proxy,
        "a TLS proxy is in front: no warning for plain HTTP beyond loopback, and its "
        "X-Forwarded-Proto (from loopback only) says the page's scheme");
    sub.add_option(
        "--auth-free-failures",
        o.auth_free_failures,
        "wrong tokens one address may send before it is held back (429)");
    sub.add_option("--threads", o.threads, "I/O threads")->check(CLI::Range(1, 64));
    sub.add_option("--window-cap", o.window_cap, "window cap in frames (slack = cap/4)");
    sub.add_option(
        "--window-cap-bytes", o.window_cap_bytes, "window cap in wire bytes (slack = cap/4)");
    sub.add_option(
        "--max-connections", o.max_connections, "open connections at most (more get 503)");
    sub.add_option("--header-timeout-ms", o.header_timeout_ms, "slow-header guard in milliseconds");
    sub.add_option(
        "--workspace-root",
        o.workspace_root,
        "claude seats' cwd must lie inside this folder (default: <data>/workspaces)");
    sub.add_option(
        "--write-timeout-ms",
        o.write_timeout_ms,
        "let a subscriber go when a write makes no progress this long (default 30000: twice "
        "the heartbeat)");
    sub.add_option(
           "--claude-projects",
           o.claude_projects,
           "serve Claude Code's session files under DIR as read-only seats, followed live "
           "(repeatable; no DIR: ~/.claude/projects); nothing is written there")
        ->expected(0, 1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll) // repeatable, each with 0 or 1
        ->allow_extra_args(false)
        ->type_name("[DIR]");
    sub.add_option(
           "--codex-sessions",
           o.codex_sessions,
           "serve Codex CLI's rollout files under DIR (YYYY/MM/DD/rollout-*.jsonl) as read-only "
           "seats, followed live (repeatable; no DIR: $CODEX_HOME/sessions, else "
           "~/.codex/sessions); nothing is written there")
        ->expected(0, 1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll) // repeatable, each with 0 or 1
        ->allow_extra_args(false)
        ->type_name("[DIR]");
    sub.add_option(
           "--acp-agent",
           o.acp_agents,
           "allow seats of agent kind acp to run this command line (an agent speaking the Agent "
           "Client Protocol on stdio, e.g. \"gemini --acp\", \"qwen --acp\", \"opencode "
           "acp\"; repeatable; a seat names it whole in its 'cmd', compared exactly)")
        ->type_name("CMD");
    sub.add_option(
        "--retain-archives-days",
        o.retain_archives_days,
        "delete reset archives and removed seats' folders (archive/) older than this many days, "
        "at start and hourly (0: keep them)");
    sub.add_option(
           "--prices",
           o.prices,
           "the usage price table, JSON in the shape of the shipped one (src/hub/prices.json: its "
           "date and source named in it); a model it does not list has no cost")
        ->type_name("FILE");
    sub.add_option(
           "--notify-url",
           o.notify_urls,
           "POST events that need a person (a prompt waiting, a long turn ended or failed, a "
           "seat degraded) to this URL as JSON (repeatable)")
        ->type_name("URL");
    sub.add_option(
        "--notify-secret",
        o.notify_secret,
        "sign --notify-url bodies: X-Sluice-Signature: sha256=<hex HMAC-SHA256 of the body>");
    sub.add_option(
           "--notify-format",
           o.notify_format,
           "json, or ntfy (a text body with Title, Tags, Priority and Click headers)")
        ->check(CLI::IsMember({"json", "ntfy"}));
    sub.add_option(
        "--notify-long-turn",
        o.notify_long_turn,
        "seconds: a turn that ran at least this long notifies (Web Push, --notify-url) when it "
        "ends or fails");
    sub.add_option(
        "--vapid-subject",
        o.vapid_subject,
        "the contact Web Push services see in the VAPID token (mailto: or https: URL)");
    sub.add_option(
           "--daily-budget-usd",
           o.daily_budget_usd,
           "what the hub's seats may spend per day (UTC) in all, in USD; a prompt beyond it is "
           "refused, a claude seat gets --max-budget-usd (0: no daily limit; a seat's own "
           "budget_usd holds either way)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("USD");
    sub.add_option("--log-format", o.log_format, "log lines as text or json (one line per event)")
        ->check(CLI::IsMember({"text", "json"}));
}

bool resolve_serve_options(CLI::App& sub, ServeOptions& o, Settings& settings, bool notice) {
    if (!settings.resolve(sub, o.config, "serve")) {
        return false;
    }
    o.data = resolve_data_dir(o.data, notice).string();
    return true;
}

} // namespace sluice::app
