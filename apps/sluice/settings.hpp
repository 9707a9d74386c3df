// A subcommand's settings from three places besides its defaults: a TOML config file, the
// environment (SLUICE_<FLAG>) and the command line. Precedence: default < file < environment <
// flag. Every long option of the subcommand is a key (`--workspace-root` is `workspace_root` and
// SLUICE_WORKSPACE_ROOT); an unknown key or a bad value is an error naming its file and line.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::app {

/// Where an effective setting came from.
enum class SettingOrigin { default_value, file, env, flag };

/// One effective setting, for `sluice config show`.
struct Setting {
    std::string key;        ///< the config file's key (`workspace_root`)
    std::string toml;       ///< its value written as TOML
    SettingOrigin origin{}; ///< where it came from
    std::string where;      ///< "FILE:LINE", "SLUICE_X" or "--flag"; "" for a default
};

class Settings {
public:
    /// The config file key of a long flag name: `workspace-root` -> `workspace_root`.
    static std::string key_of(std::string_view flag);
    /// Its environment variable: `workspace-root` -> `SLUICE_WORKSPACE_ROOT`.
    static std::string env_of(std::string_view flag);

    /// Fills every option of `app` that the command line did not give: from SLUICE_<FLAG>, else
    /// from the config file. The file: `config` when not empty (it must exist), else SLUICE_CONFIG,
    /// else the standard one (standard_config_file()) when it exists. Call after `app` parsed.
    /// `command` names the subcommand whose settings these are in messages (`serve`).
    /// @return false after one line on stderr (`FILE:LINE: key 'x': why`, `SLUICE_X: why`);
    ///   the caller exits 2.
    bool resolve(CLI::App& app, const std::string& config, std::string_view command);

    /// The config file read ("" when none).
    [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }

    /// Whether `flag` (long name, without dashes) was set anywhere but its default.
    [[nodiscard]] bool given(std::string_view flag) const;

    /// Every setting with its effective value and origin, in the subcommand's order; the value of
    /// a key in `hidden` is never shown, only whether it is set.
    [[nodiscard]] std::vector<Setting> effective(const std::vector<std::string>& hidden) const;

    /// Shows `value` (TOML text) for `key` in effective() instead of the option's own (a default
    /// resolved at run time, such as the data dir).
    void show_as(const std::string& key, std::string toml);

private:
    struct Applied {
        const CLI::Option* option{};
        std::string key;
        SettingOrigin origin{};
        std::string where;
        std::vector<std::string> values;
    };

    std::filesystem::path file_;
    std::vector<Applied> applied_;
    std::vector<std::pair<std::string, std::string>> shown_;
};

} // namespace sluice::app
