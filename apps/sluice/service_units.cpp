// The systemd units sluice writes, as text (service_units.hpp).
#include "service_units.hpp"

#include <algorithm>

namespace sluice::app {

namespace {

// Characters a unit's command-line word may hold unquoted.
bool plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || std::string_view("_./:=,+@-").find(c) != std::string_view::npos;
}

} // namespace

namespace {

// `arg` quoted for a unit file; `$` doubled only where systemd expands variables (ExecStart=).
std::string unit_word(std::string_view arg, bool command_line) {
    std::string out;
    const bool quote = arg.empty() || !std::all_of(arg.begin(), arg.end(), plain);
    if (quote) {
        out += '"';
    }
    for (const char c : arg) {
        switch (c) {
        case '%':
            out += "%%";
            break;
        case '$':
            out += command_line ? "$$" : "$";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
    if (quote) {
        out += '"';
    }
    return out;
}

} // namespace

std::string exec_word(std::string_view arg) {
    return unit_word(arg, true);
}

std::string exec_start(const UnitSpec& spec) {
    std::string line = exec_word(spec.binary) + " serve --data " + exec_word(spec.data_dir);
    if (!spec.config.empty()) {
        line += " --config " + exec_word(spec.config);
    }
    for (const auto& a : spec.serve_args) {
        line += ' ';
        line += exec_word(a);
    }
    return line;
}

std::string service_unit(const UnitSpec& spec) {
    std::string u(UNIT_MARKER);
    u += "\n[Unit]\n"
         "Description=sluice: the streaming hub for LLM agent sessions\n";
    if (spec.system) {
        u += "After=network.target\n";
    }
    if (spec.socket) { // the hub always gets systemd's socket, never binds the port itself
        u += "Requires=sluice.socket\nAfter=sluice.socket\n";
    }
    u += "\n[Service]\n"
         "Type=notify\n"
         "ExecStart="
         + exec_start(spec) + "\n";
    if (spec.system) {
        u += "# The config file, when there is one: /etc/sluice/config.toml\n"
             "Environment=XDG_CONFIG_HOME=/etc\n"
             "StateDirectory=sluice\n"
             "StateDirectoryMode=0700\n";
    }
    u += "Restart=on-failure\n"
         "RestartSec=2\n"
         "WatchdogSec="
         + std::to_string(WATCHDOG_SEC)
         + "\n"
           "NoNewPrivileges=yes\n"
           "ProtectSystem=strict\n"
           "ReadWritePaths="
         + unit_word(spec.data_dir, false)
         + "\n"
           "# Claude Code (hosted claude seats) writes its own state here; '-': if present\n"
           "ReadWritePaths=-%h/.claude -%h/.claude.json\n"
           "PrivateTmp=yes\n"
           "\n[Install]\n"
           "WantedBy="
         + (spec.system ? "multi-user.target" : "default.target") + "\n";
    return u;
}

std::string socket_unit(const UnitSpec& spec) {
    std::string u(UNIT_MARKER);
    u += "\n[Unit]\n"
         "Description=sluice: the hub's listening socket (socket activation)\n"
         "\n[Socket]\n"
         "ListenStream="
         + spec.listen
         + "\n"
           "\n[Install]\n"
           "WantedBy=sockets.target\n";
    return u;
}

bool written_by_sluice(std::string_view text) {
    const auto nl = text.find('\n');
    return text.substr(0, nl) == UNIT_MARKER;
}

} // namespace sluice::app
