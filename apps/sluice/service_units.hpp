// The systemd units `sluice service install` writes (sluice.service, sluice.socket), as text:
// pure functions, no I/O, so what a unit says is tested without systemd.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::app {

/// The first line of every unit sluice writes; `uninstall` removes only files that carry it,
/// and `install` replaces only those.
inline constexpr std::string_view UNIT_MARKER =
    "# Written by `sluice service install`; `sluice service uninstall` removes it.";

/// Where the hub keeps its data as a system service (StateDirectory=sluice).
inline constexpr std::string_view SYSTEM_DATA_DIR = "/var/lib/sluice";

/// How often the hub must ping the watchdog (WatchdogSec=): it pings every third of it, from its
/// event loop. Basis: an event loop stuck this long serves nobody; a restart is cheaper.
inline constexpr unsigned WATCHDOG_SEC = 30;

/// What the units say.
struct UnitSpec {
    bool system{false};   ///< a system service (else a user service)
    bool socket{false};   ///< with sluice.socket: systemd listens and passes the socket
    std::string binary;   ///< absolute path of the sluice binary ExecStart runs
    std::string data_dir; ///< `serve --data`, and the one writable path
    std::string config;   ///< `serve --config` when not empty
    std::string listen{"127.0.0.1:8420"}; ///< sluice.socket's ListenStream=
    std::vector<std::string> serve_args;  ///< more `serve` flags, as given after `--`
};

/// `arg` as one word of a unit's command line: quoted when it holds anything but plain
/// characters, `%` and `$` doubled so systemd takes them literally.
std::string exec_word(std::string_view arg);

/// The ExecStart= value: `binary serve --data DIR [--config FILE] serve_args…`.
std::string exec_start(const UnitSpec& spec);

/// sluice.service: Type=notify, the watchdog, the sandbox, restart on failure.
std::string service_unit(const UnitSpec& spec);

/// sluice.socket: ListenStream= spec.listen.
std::string socket_unit(const UnitSpec& spec);

/// Whether `text` (a unit file's contents) is one sluice wrote: its first line is UNIT_MARKER.
bool written_by_sluice(std::string_view text);

} // namespace sluice::app
