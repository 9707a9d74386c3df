// Where a hub keeps its things on this machine, and how the CLI finds a running hub: the data dir
// (XDG state dir by default, an earlier version's ./sluice-data used with a notice), the config
// file, `hub.json` (a running hub's address, written by `serve`) and the lock that keeps one hub
// per data dir.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sluice::app {

/// The folder an earlier version used when no --data was given (relative to the current one).
inline constexpr const char* LEGACY_DATA_DIR = "sluice-data";
/// A running hub's address in its data dir (0600; removed at a clean exit).
inline constexpr const char* HUB_FILE = "hub.json";
/// The lock file a hub holds (flock) for as long as it runs on a data dir.
inline constexpr const char* LOCK_FILE = "hub.lock";
/// Where the CLI looks when nothing says where the hub is.
inline constexpr const char* DEFAULT_HUB_URL = "http://127.0.0.1:8420";

/// `$XDG_STATE_HOME/sluice`, else `~/.local/state/sluice` (`./sluice-state` without a HOME).
std::filesystem::path standard_data_dir();

/// `$XDG_CONFIG_HOME/sluice/config.toml`, else `~/.config/sluice/config.toml`.
std::filesystem::path standard_config_file();

/// The data dir to use: `given` when not empty; else `./sluice-data` when it exists (an earlier
/// version's), with a one-line notice on stderr when `notice` is set; else the standard one.
std::filesystem::path resolve_data_dir(const std::string& given, bool notice);

/// What a running hub says about itself in its data dir's hub.json.
struct HubFile {
    std::string url;        ///< a URL the CLI on this machine can reach (loopback for a wildcard)
    std::string public_url; ///< --public-url, when set
    std::vector<std::string> pages; ///< the addresses people can open (without the token)
    long pid{0};
    std::int64_t started{0}; ///< unix seconds
};

/// Writes `dir`/hub.json (0600, replaced atomically). @return false after a warning on failure.
bool write_hub_file(const std::filesystem::path& dir, const HubFile& f);

/// The hub.json in `dir` when there is one whose process still runs (a stale one, its pid gone,
/// is ignored), else nullopt.
std::optional<HubFile> read_hub_file(const std::filesystem::path& dir);

/// Removes `dir`/hub.json when it is this process's.
void remove_hub_file(const std::filesystem::path& dir);

/// `host:port` (no scheme) made `http://host:port`; anything with a scheme as it is; a trailing
/// slash dropped.
std::string normalize_hub_url(std::string url);

/// The hub the CLI talks to: `flag`, else SLUICE_HUB, else the data dir's live hub.json, else
/// DEFAULT_HUB_URL.
std::string resolve_hub_url(const std::string& flag, const std::filesystem::path& data_dir);

/// The binary running now (/proc/self/exe; `/usr/bin/sluice` when it cannot be read): what a
/// systemd unit or a Claude Code hook entry runs.
std::string this_binary();

/// The lock that makes a hub the only one on its data dir, held until destruction.
class HubLock {
public:
    HubLock() = default;
    ~HubLock();

    HubLock(HubLock&& o) noexcept
        : fd_(o.fd_) {
        o.fd_ = -1;
    }

    HubLock& operator=(HubLock&& o) noexcept;
    HubLock(const HubLock&) = delete;
    HubLock& operator=(const HubLock&) = delete;

    /// Takes `dir`/hub.lock (created 0600; close-on-exec, so agents never inherit it).
    /// @return the lock; nullopt with `why` set when another process holds it (naming its pid and
    /// URL from hub.json when known) or the file cannot be opened.
    static std::optional<HubLock> acquire(const std::filesystem::path& dir, std::string& why);

private:
    int fd_{-1};
};

/// The page addresses of a hub on `host`:`port`: `public_url` when set; for a wildcard host each
/// non-loopback address of this machine (and loopback last); else the host itself.
std::vector<std::string> page_addresses(
    const std::string& scheme,
    const std::string& host,
    unsigned port,
    const std::string& public_url);

} // namespace sluice::app
