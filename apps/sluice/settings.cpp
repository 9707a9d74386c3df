// A subcommand's settings from its config file, the environment and its flags (settings.hpp).
#include "settings.hpp"

#include "locations.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

namespace sluice::app {

namespace fs = std::filesystem;

namespace {

// The long name of an option ("" for positionals and the ones that are not settings).
std::string flag_name(const CLI::Option* opt) {
    if (opt->get_positional() || opt->get_lnames().empty()) {
        return {};
    }
    const std::string& n = opt->get_lnames().front();
    return n == "help" || n == "config" ? std::string() : n;
}

bool is_flag(const CLI::Option* opt) {
    return opt->get_expected_max() == 0; // add_flag: expected(0)
}

// Whether the option takes several values (repeatable): a list in the file, commas in the env.
bool is_list(const CLI::Option* opt) {
    return !is_flag(opt)
           && (opt->get_items_expected_max() > 1
               || opt->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll);
}

bool is_number(const std::string& s) {
    if (s.empty()) {
        return false;
    }
    char* end = nullptr;
    (void)std::strtod(s.c_str(), &end);
    return end != nullptr && *end == '\0';
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// A value written as TOML, typed by the option: a flag is a boolean, a number stays a number
// when the default is one, everything else a string; a repeatable option is an array.
std::string as_toml(const CLI::Option* opt, const std::vector<std::string>& values) {
    auto one = [opt](const std::string& v) {
        if (is_flag(opt)) {
            const bool off = v == "false" || v == "0" || v == "off" || v == "no" || v == "-1";
            return std::string(off ? "false" : "true");
        }
        if (is_number(v) && is_number(opt->get_default_str())) {
            return v;
        }
        return quoted(v);
    };
    if (is_list(opt)) {
        std::string out = "[";
        for (std::size_t i = 0; i < values.size(); ++i) {
            out += (i > 0 ? ", " : "") + one(values[i]);
        }
        return out + "]";
    }
    if (values.empty()) {
        return is_flag(opt) ? "false" : one(opt->get_default_str());
    }
    return one(values.back());
}

// A TOML scalar as the text CLI11 parses; nullopt for a table or an array.
std::optional<std::string> scalar_text(const toml::node& n) {
    if (const auto* s = n.as_string()) {
        return s->get();
    }
    if (const auto* i = n.as_integer()) {
        return std::to_string(i->get());
    }
    if (const auto* f = n.as_floating_point()) {
        std::ostringstream o;
        o << f->get();
        return o.str();
    }
    if (const auto* b = n.as_boolean()) {
        return std::string(b->get() ? "true" : "false");
    }
    return std::nullopt;
}

// The values a file's node gives an option, or a reason it cannot.
std::optional<std::vector<std::string>>
file_values(const CLI::Option* opt, const toml::node& n, std::string& why) {
    std::vector<std::string> out;
    if (const auto* arr = n.as_array()) {
        if (!is_list(opt)) {
            why = "takes one value, not a list";
            return std::nullopt;
        }
        for (const auto& e : *arr) {
            auto t = scalar_text(e);
            if (!t || e.is_boolean()) {
                why = "a list of strings or numbers is expected";
                return std::nullopt;
            }
            out.push_back(std::move(*t));
        }
        return out;
    }
    if (n.is_table()) {
        why = "a table is not a setting (every key is at the top level)";
        return std::nullopt;
    }
    if (n.is_boolean() != is_flag(opt)) {
        // A repeatable option with an optional value (claude_projects = true: its default folder).
        if (n.is_boolean() && opt->get_expected_min() == 0 && is_list(opt)) {
            if (n.as_boolean()->get()) {
                out.emplace_back();
            }
            return out;
        }
        why = is_flag(opt) ? "expects true or false" : "expects a value, not true or false";
        return std::nullopt;
    }
    out.push_back(*scalar_text(n));
    return out;
}

std::vector<std::string> env_values(const CLI::Option* opt, const std::string& v) {
    std::vector<std::string> out;
    if (!is_list(opt)) {
        out.push_back(v);
        return out;
    }
    std::size_t start = 0;
    while (start <= v.size()) {
        const auto comma = v.find(',', start);
        const auto end = comma == std::string::npos ? v.size() : comma;
        out.push_back(v.substr(start, end - start));
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

// Gives `opt` the values as if they had been on the command line, its checks included.
bool apply(CLI::Option* opt, const std::vector<std::string>& values, std::string& why) {
    try {
        if (values.empty() && is_list(opt)) {
            opt->add_result(std::string("{}")); // CLI11's empty list
        }
        for (const auto& v : values) {
            opt->add_result(v);
        }
        opt->run_callback();
        return true;
    } catch (const CLI::Error& e) {
        why = e.what();
        return false;
    }
}

} // namespace

std::string Settings::key_of(std::string_view flag) {
    std::string k(flag);
    std::replace(k.begin(), k.end(), '-', '_');
    return k;
}

std::string Settings::env_of(std::string_view flag) {
    std::string e = "SLUICE_" + key_of(flag);
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) {
        return static_cast<char>(std::toupper(c));
    });
    return e;
}

bool Settings::resolve(CLI::App& app, const std::string& config, std::string_view command) {
    applied_.clear();
    std::error_code ec;
    bool must_exist = true;
    file_ = config;
    if (file_.empty()) {
        if (const char* env = std::getenv("SLUICE_CONFIG"); env != nullptr && *env != '\0') {
            file_ = env;
        } else {
            file_ = standard_config_file();
            must_exist = false;
        }
    }
    if (!file_.empty() && !fs::exists(file_, ec)) {
        if (must_exist) {
            std::fprintf(stderr, "%s: no such config file\n", file_.c_str());
            return false;
        }
        file_.clear();
    }

    // The file's keys, each with its line; checked against the options whether used or not.
    toml::table table;
    if (!file_.empty()) {
        try {
            table = toml::parse_file(file_.string());
        } catch (const toml::parse_error& e) {
            std::fprintf(
                stderr,
                "%s:%u: %.*s\n",
                file_.c_str(),
                static_cast<unsigned>(e.source().begin.line),
                static_cast<int>(e.description().size()),
                e.description().data());
            return false;
        }
    }
    std::map<std::string, CLI::Option*> by_key;
    for (CLI::Option* opt : app.get_options()) {
        if (auto n = flag_name(opt); !n.empty()) {
            by_key.emplace(key_of(n), opt);
        }
    }
    for (const auto& [k, node] : table) {
        if (by_key.count(std::string(k.str())) == 0) {
            std::fprintf(
                stderr,
                "%s:%u: key '%s': not a setting of `sluice %.*s` (see its --help; keys are its "
                "flags with _ for -)\n",
                file_.c_str(),
                static_cast<unsigned>(k.source().begin.line),
                std::string(k.str()).c_str(),
                static_cast<int>(command.size()),
                command.data());
            return false;
        }
    }

    for (CLI::Option* opt : app.get_options()) {
        const std::string name = flag_name(opt);
        if (name.empty()) {
            continue;
        }
        Applied a{opt, key_of(name), SettingOrigin::default_value, {}, {}};
        std::string why;
        if (opt->count() > 0) {
            a.origin = SettingOrigin::flag;
            a.where = "--" + name;
            a.values = opt->results();
        } else if (const char* env = std::getenv(env_of(name).c_str()); env != nullptr) {
            a.origin = SettingOrigin::env;
            a.where = env_of(name);
            a.values = env_values(opt, env);
            if (is_flag(opt) && *env == '\0') {
                a.values = {"true"};
            }
            if (!apply(opt, a.values, why)) {
                std::fprintf(stderr, "%s: %s\n", a.where.c_str(), why.c_str());
                return false;
            }
        } else if (const toml::node* n = table.get(a.key)) {
            a.origin = SettingOrigin::file;
            a.where = file_.string() + ":" + std::to_string(n->source().begin.line);
            auto values = file_values(opt, *n, why);
            if (!values || !apply(opt, *values, why)) {
                std::fprintf(
                    stderr, "%s: key '%s': %s\n", a.where.c_str(), a.key.c_str(), why.c_str());
                return false;
            }
            a.values = std::move(*values);
        }
        applied_.push_back(std::move(a));
    }
    return true;
}

bool Settings::given(std::string_view flag) const {
    const std::string key = key_of(flag);
    return std::any_of(applied_.begin(), applied_.end(), [&key](const Applied& a) {
        return a.key == key && a.origin != SettingOrigin::default_value;
    });
}

void Settings::show_as(const std::string& key, std::string toml) {
    shown_.emplace_back(key, std::move(toml));
}

std::vector<Setting> Settings::effective(const std::vector<std::string>& hidden) const {
    std::vector<Setting> out;
    for (const auto& a : applied_) {
        Setting s{a.key, as_toml(a.option, a.values), a.origin, a.where};
        for (const auto& [k, v] : shown_) {
            if (k == a.key && a.origin == SettingOrigin::default_value) {
                s.toml = v;
            }
        }
        if (std::find(hidden.begin(), hidden.end(), a.key) != hidden.end()) {
            const bool set = a.origin != SettingOrigin::default_value
                             && !(a.values.size() == 1 && a.values.front().empty());
            s.toml = set ? "\"(set, not shown)\"" : "\"\"";
        }
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace sluice::app
