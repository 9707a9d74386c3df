// `sluice config show`: the effective settings of `serve` and where each came from.
// `sluice data move`: an earlier version's ./sluice-data moved to the standard data dir.
#include "commands.hpp"
#include "locations.hpp"
#include "serve_options.hpp"
#include "settings.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace sluice::app {

namespace {

namespace fs = std::filesystem;

const char* origin_name(SettingOrigin o) {
    switch (o) {
    case SettingOrigin::default_value:
        return "default";
    case SettingOrigin::file:
        return "file";
    case SettingOrigin::env:
        return "env";
    case SettingOrigin::flag:
        return "flag";
    }
    return "?";
}

std::string toml_string(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

int cmd_show(CLI::App& sub, ServeOptions& o) {
    Settings settings;
    if (!resolve_serve_options(sub, o, settings, false)) {
        return 2;
    }
    settings.show_as("data", toml_string(o.data));
    const auto list = settings.effective({"token"});
    std::printf("# the settings `sluice serve` would run with: default < file < env < flag\n");
    if (settings.file().empty()) {
        std::printf("# config file: none (looked for %s)\n", standard_config_file().c_str());
    } else {
        std::printf("# config file: %s\n", settings.file().c_str());
    }
    std::size_t width = 0;
    for (const auto& s : list) {
        width = std::max(width, s.key.size() + 3 + s.toml.size());
    }
    for (const auto& s : list) {
        const std::string line = s.key + " = " + s.toml;
        std::printf(
            "%-*s  # %s%s%s\n",
            static_cast<int>(width),
            line.c_str(),
            origin_name(s.origin),
            s.where.empty() ? "" : " ",
            s.where.c_str());
    }
    return 0;
}

struct MoveOptions {
    std::string from{LEGACY_DATA_DIR};
    std::string to;
};

int cmd_move(const MoveOptions& m) {
    std::error_code ec;
    const fs::path from = fs::absolute(m.from, ec);
    const fs::path to = m.to.empty() ? standard_data_dir() : fs::absolute(m.to, ec);
    if (!fs::is_directory(from, ec)) {
        std::fprintf(stderr, "sluice data move: no data dir at %s\n", from.c_str());
        return 2;
    }
    if (fs::exists(to, ec) && !fs::is_empty(to, ec)) {
        std::fprintf(
            stderr,
            "sluice data move: %s already holds data; nothing was moved (move or remove one of "
            "the two yourself)\n",
            to.c_str());
        return 1;
    }
    // A running hub on it would go on writing into the old place: refuse while one holds it.
    std::string why;
    auto lock = HubLock::acquire(from, why);
    if (!lock) {
        std::fprintf(stderr, "sluice data move: %s\n", why.c_str());
        return 1;
    }
    fs::create_directories(to.parent_path(), ec);
    fs::remove(to, ec); // empty, or absent
    fs::rename(from, to, ec);
    if (ec == std::errc::cross_device_link) {
        ec.clear();
        fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (!ec) {
            fs::remove_all(from, ec);
        }
    }
    if (ec) {
        std::fprintf(
            stderr,
            "sluice data move: cannot move %s to %s: %s\n",
            from.c_str(),
            to.c_str(),
            ec.message().c_str());
        return 1;
    }
    std::printf("moved %s to %s\n", from.c_str(), to.c_str());
    return 0;
}

} // namespace

void add_config_commands(CLI::App& app) {
    auto* config = app.add_subcommand("config", "The hub's settings");
    config->require_subcommand(1);
    auto* show = config->add_subcommand(
        "show",
        "Print the settings `serve` would run with (it takes serve's flags) and where each came "
        "from: default, file, env or flag; never the token");
    auto o = std::make_shared<ServeOptions>();
    add_serve_options(*show, *o);
    on_selected(show, [show, o] { return cmd_show(*show, *o); });

    auto* data = app.add_subcommand("data", "The hub's data dir");
    data->require_subcommand(1);
    auto* move = data->add_subcommand(
        "move",
        "Move an earlier version's ./sluice-data to the standard data dir "
        "($XDG_STATE_HOME/sluice)");
    auto m = std::make_shared<MoveOptions>();
    move->add_option("--from", m->from, "the data dir to move")->capture_default_str();
    move->add_option("--to", m->to, "where to (default: the standard data dir)");
    on_selected(move, [m] { return cmd_move(*m); });
}

} // namespace sluice::app
