// Claude Code's settings JSON and sluice's hook entries in it (hook_settings.hpp).
#include "hook_settings.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace sluice::app {

namespace json = boost::json;

namespace {

// `s` single-quoted for a POSIX shell.
std::string shell_quote(std::string_view s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    out += '\'';
    return out;
}

void pretty(const json::value& v, std::string& out, std::size_t indent) {
    const std::string pad(indent + 2, ' ');
    if (const auto* o = v.if_object(); o != nullptr && !o->empty()) {
        out += "{\n";
        bool first = true;
        for (const auto& kv : *o) {
            out += first ? "" : ",\n";
            first = false;
            out += pad + json::serialize(json::value(kv.key())) + ": ";
            pretty(kv.value(), out, indent + 2);
        }
        out += "\n" + std::string(indent, ' ') + "}";
    } else if (const auto* a = v.if_array(); a != nullptr && !a->empty()) {
        out += "[\n";
        bool first = true;
        for (const auto& e : *a) {
            out += first ? "" : ",\n";
            first = false;
            out += pad;
            pretty(e, out, indent + 2);
        }
        out += "\n" + std::string(indent, ' ') + "]";
    } else {
        out += json::serialize(v);
    }
}

std::optional<json::object> parse_settings(std::string_view text, std::string& why) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        return json::object{};
    }
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) {
        why = ec ? "it is not JSON: " + ec.message() : "it is not a JSON object";
        return std::nullopt;
    }
    return std::move(v.get_object());
}

bool is_ours(const json::value& hook) {
    const auto* o = hook.if_object();
    const auto* cmd = o != nullptr ? o->if_contains("command") : nullptr;
    return cmd != nullptr && cmd->is_string() && is_sluice_command(cmd->get_string());
}

// Removes sluice's entries; what they leave empty goes too. @return whether any was removed.
bool remove_ours(json::object& settings) {
    auto* hooks = settings.if_contains("hooks");
    if (hooks == nullptr || !hooks->is_object()) {
        return false;
    }
    bool removed = false;
    std::vector<std::string> emptied;
    for (auto& [event, groups] : hooks->get_object()) {
        auto* arr = groups.if_array();
        if (arr == nullptr) {
            continue;
        }
        bool here = false;
        for (auto g = arr->begin(); g != arr->end();) {
            auto* list = g->is_object() ? g->get_object().if_contains("hooks") : nullptr;
            if (list == nullptr || !list->is_array()) {
                ++g;
                continue;
            }
            auto& l = list->get_array();
            const auto before = l.size();
            for (auto h = l.begin(); h != l.end();) {
                h = is_ours(*h) ? l.erase(h) : h + 1;
            }
            if (l.size() != before) {
                here = true;
            }
            g = l.size() != before && l.empty() ? arr->erase(g) : g + 1;
        }
        removed = removed || here;
        if (here && arr->empty()) {
            emptied.emplace_back(event);
        }
    }
    for (const auto& e : emptied) {
        hooks->get_object().erase(e);
    }
    if (removed && hooks->get_object().empty()) {
        settings.erase("hooks");
    }
    return removed;
}

} // namespace

std::string hook_command(const HookEntry& entry, std::string_view event) {
    std::string cmd = shell_quote(entry.binary) + " hook claude " + std::string(event)
                      + " --timeout " + std::to_string(entry.timeout.count()) + "s";
    if (!entry.data.empty()) {
        cmd += " --data " + shell_quote(entry.data);
    }
    return cmd;
}

bool is_sluice_command(std::string_view command) {
    const auto at = command.find(" hook claude ");
    if (at == std::string_view::npos) {
        return false;
    }
    auto bin = command.substr(0, at);
    if (bin.size() >= 2 && bin.front() == '\'' && bin.back() == '\'') {
        bin = bin.substr(1, bin.size() - 2);
    }
    const auto slash = bin.rfind('/');
    const auto base = slash == std::string_view::npos ? bin : bin.substr(slash + 1);
    auto rest = command.substr(at + 13);
    rest = rest.substr(0, rest.find(' '));
    return base == "sluice"
           && std::find(HOOKED_EVENTS.begin(), HOOKED_EVENTS.end(), rest) != HOOKED_EVENTS.end();
}

std::optional<std::string>
with_hooks(std::string_view settings, const HookEntry& entry, std::string& why) {
    auto o = parse_settings(settings, why);
    if (!o) {
        return std::nullopt;
    }
    remove_ours(*o);
    auto& hooks = (*o)["hooks"];
    if (hooks.is_null()) {
        hooks = json::object{};
    }
    if (!hooks.is_object()) {
        why = "its \"hooks\" is not an object";
        return std::nullopt;
    }
    for (const auto event : HOOKED_EVENTS) {
        auto& groups = hooks.get_object()[event];
        if (groups.is_null()) {
            groups = json::array{};
        }
        if (!groups.is_array()) {
            why = "its hooks." + std::string(event) + " is not a list";
            return std::nullopt;
        }
        groups.get_array().push_back(json::object{
            {"hooks",
             json::array{json::object{
                 {"type", "command"},
                 {"command", hook_command(entry, event)},
                 {"timeout", entry.timeout.count()}}}}});
    }
    return pretty_json(*o);
}

std::optional<std::string> without_hooks(std::string_view settings, std::string& why) {
    auto o = parse_settings(settings, why);
    if (!o) {
        return std::nullopt;
    }
    remove_ours(*o);
    return pretty_json(*o);
}

std::vector<std::pair<std::string, std::string>> installed_hooks(std::string_view settings) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string why;
    auto o = parse_settings(settings, why);
    const auto* hooks = o ? o->if_contains("hooks") : nullptr;
    if (hooks == nullptr || !hooks->is_object()) {
        return out;
    }
    for (const auto& [event, groups] : hooks->get_object()) {
        const auto* arr = groups.if_array();
        for (std::size_t g = 0; arr != nullptr && g < arr->size(); ++g) {
            const auto* grp = (*arr)[g].if_object();
            const auto* list = grp != nullptr ? grp->if_contains("hooks") : nullptr;
            if (list == nullptr || !list->is_array()) {
                continue;
            }
            for (const auto& h : list->get_array()) {
                if (is_ours(h)) {
                    out.emplace_back(event, std::string(h.at("command").get_string()));
                }
            }
        }
    }
    return out;
}

std::string pretty_json(const json::value& v) {
    std::string out;
    pretty(v, out, 0);
    out += '\n';
    return out;
}

} // namespace sluice::app
