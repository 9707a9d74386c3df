// `sluice service install|uninstall`: the hub as a systemd service (service_units.hpp writes the
// units' text; this file finds where they go, writes and removes them, and says what to run).
#include "commands.hpp"
#include "locations.hpp"
#include "service_units.hpp"

#include <sluice/core/safe_write.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::app {

namespace {

namespace fs = std::filesystem;

constexpr const char* SERVICE_FILE = "sluice.service";
constexpr const char* SOCKET_FILE = "sluice.socket";

struct ServiceOptions {
    bool system{false};
    bool user{false};
    bool socket{false};
    bool print{false};
    std::string unit_dir;
    std::string config;
    std::string data;
    std::string listen{"127.0.0.1:8420"};
    std::string exec; // --exec: the binary ExecStart runs (default: this one)
    std::vector<std::string> serve_args;
};

// Where the units go: --unit-dir, else /etc/systemd/system or the user's
// $XDG_CONFIG_HOME/systemd/user (~/.config/systemd/user).
fs::path unit_dir(const ServiceOptions& o) {
    if (!o.unit_dir.empty()) {
        return fs::path(o.unit_dir);
    }
    if (o.system) {
        return "/etc/systemd/system";
    }
    // The config file's folder is $XDG_CONFIG_HOME/sluice: its parent is $XDG_CONFIG_HOME.
    const fs::path config_home = standard_config_file().parent_path().parent_path();
    return config_home.empty() ? fs::path() : config_home / "systemd" / "user";
}

std::string systemctl(const ServiceOptions& o) {
    return o.system ? "systemctl" : "systemctl --user";
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

UnitSpec unit_spec(const ServiceOptions& o) {
    UnitSpec spec;
    spec.system = o.system;
    spec.socket = o.socket;
    spec.binary = o.exec.empty() ? this_binary() : o.exec;
    std::error_code ec;
    if (!o.data.empty()) {
        spec.data_dir = fs::absolute(o.data, ec).string();
    } else {
        spec.data_dir = o.system ? std::string(SYSTEM_DATA_DIR) : standard_data_dir().string();
    }
    spec.config = o.config.empty() ? std::string() : fs::absolute(o.config, ec).string();
    spec.listen = o.listen;
    spec.serve_args = o.serve_args;
    return spec;
}

int cmd_install(const ServiceOptions& o) {
    const UnitSpec spec = unit_spec(o);
    std::vector<std::pair<std::string, std::string>> units{{SERVICE_FILE, service_unit(spec)}};
    if (o.socket) {
        units.emplace_back(SOCKET_FILE, socket_unit(spec));
    }
    if (o.print) {
        for (const auto& [name, text] : units) { // one unit as it is; two, each named
            if (units.size() > 1) {
                std::printf(
                    "%s# ---- %s\n", &text == &units.front().second ? "" : "\n", name.c_str());
            }
            std::printf("%s", text.c_str());
        }
        return 0;
    }
    const fs::path dir = unit_dir(o);
    if (dir.empty()) {
        std::fprintf(stderr, "sluice service install: no HOME; say where with --unit-dir\n");
        return 2;
    }
    std::error_code ec;
    for (const auto& [name, text] : units) { // all refused, or none: check before writing
        const fs::path p = dir / name;
        if (fs::exists(p, ec) && !written_by_sluice(read_text(p))) {
            std::fprintf(
                stderr,
                "sluice service install: %s exists and was not written by sluice; nothing was "
                "written (move it away, or choose another --unit-dir)\n",
                p.c_str());
            return 1;
        }
    }
    // A user service's data dir must exist before it starts: ReadWritePaths= names it, and
    // ProtectSystem=strict leaves nothing else writable to create it in.
    if (!o.system && !fs::exists(spec.data_dir, ec)) {
        fs::create_directories(spec.data_dir, ec);
        fs::permissions(spec.data_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
        if (ec) {
            std::fprintf(
                stderr,
                "sluice service install: cannot create the data dir %s: %s\n",
                spec.data_dir.c_str(),
                ec.message().c_str());
            return 1;
        }
    }
    fs::create_directories(dir, ec);
    for (const auto& [name, text] : units) {
        const fs::path p = dir / name;
        const bool had = fs::exists(p, ec);
        if (auto r = safe_write(p, text, 0644); !r) {
            std::fprintf(
                stderr,
                "sluice service install: cannot write %s: %s\n",
                p.c_str(),
                r.error().message().c_str());
            return 1;
        }
        std::printf("%s %s\n", had ? "replaced" : "wrote", p.c_str());
    }
    std::printf(
        "nothing was started; to start it now and at every boot%s:\n  %s daemon-reload && %s "
        "enable --now %s\n",
        o.system ? "" : " (user session)",
        systemctl(o).c_str(),
        systemctl(o).c_str(),
        o.socket ? SOCKET_FILE : "sluice");
    return 0;
}

int cmd_uninstall(const ServiceOptions& o) {
    const fs::path dir = unit_dir(o);
    if (dir.empty()) {
        std::fprintf(stderr, "sluice service uninstall: no HOME; say where with --unit-dir\n");
        return 2;
    }
    std::error_code ec;
    int removed = 0;
    int status = 0;
    for (const char* name : {SERVICE_FILE, SOCKET_FILE}) {
        const fs::path p = dir / name;
        if (!fs::exists(p, ec)) {
            continue;
        }
        if (!written_by_sluice(read_text(p))) {
            std::printf("left %s: not written by sluice\n", p.c_str());
            status = 1;
            continue;
        }
        // `enable` links it from <target>.wants/: those links would dangle.
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const fs::path link = e.path() / name;
            if (e.is_directory(ec) && fs::is_symlink(link, ec) && fs::read_symlink(link, ec) == p) {
                fs::remove(link, ec);
                std::printf("removed %s\n", link.c_str());
            }
        }
        if (!fs::remove(p, ec) || ec) {
            std::fprintf(
                stderr,
                "sluice service uninstall: cannot remove %s: %s\n",
                p.c_str(),
                ec.message().c_str());
            return 1;
        }
        std::printf("removed %s\n", p.c_str());
        ++removed;
    }
    if (removed == 0) {
        std::printf("no sluice units in %s; nothing was removed\n", dir.c_str());
        return status;
    }
    std::printf(
        "if it still runs: %s stop sluice.socket sluice; then: %s daemon-reload\n",
        systemctl(o).c_str(),
        systemctl(o).c_str());
    return status;
}

void add_scope_flags(CLI::App& sub, ServiceOptions& o) {
    auto* user = sub.add_flag(
        "--user",
        o.user,
        "a user service (the default): units in $XDG_CONFIG_HOME/systemd/user, data in "
        "$XDG_STATE_HOME/sluice");
    sub.add_flag(
           "--system",
           o.system,
           "a system service: units in /etc/systemd/system, data in /var/lib/sluice, config "
           "/etc/sluice/config.toml")
        ->excludes(user);
    sub.add_option("--unit-dir", o.unit_dir, "where the units are (instead of the above)");
}

} // namespace

void add_service_command(CLI::App& app) {
    auto* service = app.add_subcommand("service", "Run the hub as a systemd service");
    service->require_subcommand(1);
    auto o = std::make_shared<ServiceOptions>();

    auto* install = service->add_subcommand(
        "install",
        "Write sluice.service (and with --socket sluice.socket); starts nothing. ExecStart is "
        "this binary's `serve --data DIR`, then --config FILE when given, then every flag after "
        "`--`: sluice service install -- --listen 0.0.0.0:8420 --threads 4");
    add_scope_flags(*install, *o);
    install->add_flag(
        "--socket",
        o->socket,
        "also sluice.socket: systemd listens on --listen and starts the hub at the first "
        "connection (the hub serves on the socket it passes)");
    install->add_option("--listen", o->listen, "sluice.socket's address:port")
        ->capture_default_str();
    install->add_option("--config", o->config, "the config file `serve` reads");
    install->add_option("--data", o->data, "the data dir (default: the standard one)");
    install->add_flag("--print", o->print, "write the units to stdout instead of to files");
    install->add_option(
        "--exec",
        o->exec,
        "the sluice binary ExecStart runs (default: this one; a package names where it installs "
        "it)");
    install->add_option("serve-flags", o->serve_args, "more `serve` flags, after `--`");
    on_selected(install, [o] { return cmd_install(*o); });

    auto* uninstall = service->add_subcommand(
        "uninstall",
        "Remove sluice.service and sluice.socket, when sluice wrote them (their first line says "
        "so), and the links `systemctl enable` made to them");
    add_scope_flags(*uninstall, *o);
    on_selected(uninstall, [o] { return cmd_uninstall(*o); });
}

} // namespace sluice::app
