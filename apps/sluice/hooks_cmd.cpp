// `sluice hook claude EVENT` (a Claude Code hook: the event to the hub; a PermissionRequest waits
// for the answer given on any screen) and `sluice hooks install|uninstall|status` (sluice's
// entries in Claude Code's settings, added and removed exactly).
#include "client.hpp"
#include "commands.hpp"
#include "hook_settings.hpp"
#include "locations.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/server/auth.hpp>

#include <boost/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

namespace sluice::app {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Most bytes of a hook's input read from stdin (a tool input is capped by Claude Code far
// below; more is not a hook's input).
constexpr std::size_t HOOK_INPUT_MAX = 4U << 20U;
// The default budget of a PermissionRequest hook (the issue's: 10 minutes).
constexpr std::chrono::seconds DEFAULT_HOOK_TIMEOUT{600};
// One wait asked of the hub (it answers sooner: at most half its header timeout).
constexpr milliseconds HOOK_POLL{25'000};
// How long reaching the hub may take: a hub down must cost the terminal little.
constexpr milliseconds HOOK_CONNECT{2'000};
// The hub is asked to end each wait, and to close the prompt at the hook's timeout, this much
// before the hook stops listening: its answer arrives instead of racing the hook's own end (else
// an answer the hub took in that last moment would win there and never reach Claude Code).
constexpr milliseconds HOOK_ANSWER_MARGIN{500};

// ---- sluice hook claude EVENT --------------------------------------------------------------

struct HookOptions {
    client::ClientOptions client;
    std::string agent;
    std::string event;
    std::string timeout; // the hook entry's own timeout ("600s")
};

// Ends early, on purpose, with no decision: the terminal's own dialog answers. Says why on
// stderr (Claude Code shows it in its transcript view, never as a decision).
int no_decision(const std::string& why) {
    std::fprintf(stderr, "sluice hook: %s; no decision (the terminal answers)\n", why.c_str());
    return 0;
}

// One POST to the hub within `budget`: the answer's JSON, or nothing (with `why`).
std::optional<json::value> post(
    const client::ClientOptions& o,
    const std::string& path,
    const json::object& body,
    milliseconds budget,
    std::string& why) {
    transport::HttpOptions opt;
    opt.max_attempts = 1;
    opt.proxy = "";
    opt.connect_timeout = std::min(HOOK_CONNECT, budget);
    opt.first_byte_timeout = budget;
    opt.idle_timeout = budget;
    transport::HttpClient http(opt);
    transport::HttpRequest req{"POST", o.hub + path, {}, json::serialize(body)};
    req.headers.emplace_back("Content-Type", "application/json");
    if (const auto token = client::client_token(o); !token.empty()) {
        req.headers.emplace_back("Authorization", "Bearer " + token);
    }
    std::string got;
    auto r = http.request_blocking(req, CancellationToken{}, [&](std::string_view c) {
        got.append(c);
        return got.size() < HOOK_INPUT_MAX;
    });
    if (!r) {
        why = "cannot reach the hub at " + o.hub + ": " + http.error_message();
        return std::nullopt;
    }
    if (r->status != 200) {
        why = "the hub answered HTTP " + std::to_string(r->status) + ": " + r->body;
        return std::nullopt;
    }
    boost::system::error_code ec;
    auto v = json::parse(got, ec);
    if (ec || !v.is_object()) {
        why = "the hub answered something that is not a JSON object";
        return std::nullopt;
    }
    return v;
}

// Claude Code's PermissionRequest hook output for an answer from the hub.
std::string decision_json(const json::object& outcome) {
    json::object decision;
    const auto& state = outcome.at("state").as_string();
    if (state == "allow") {
        decision["behavior"] = "allow";
        if (const auto* in = outcome.if_contains("updated_input"); in && in->is_object()) {
            decision["updatedInput"] = *in;
        }
    } else {
        decision["behavior"] = "deny";
        std::string message;
        if (const auto* m = outcome.if_contains("message"); m && m->is_string()) {
            message = std::string(m->get_string());
        }
        if (message.empty()) {
            const auto* by = outcome.if_contains("by");
            message = "Denied from sluice"
                      + (by && by->is_string() ? " by " + std::string(by->get_string()) : "");
        }
        decision["message"] = message;
    }
    return json::serialize(json::object{
        {"hookSpecificOutput",
         json::object{{"hookEventName", "PermissionRequest"}, {"decision", std::move(decision)}}}});
}

int run_hook(HookOptions& ho) {
    const auto start = Clock::now();
    if (ho.agent != "claude") {
        return no_decision("only Claude Code's hooks are known (agent 'claude')");
    }
    auto budget = std::chrono::duration_cast<milliseconds>(DEFAULT_HOOK_TIMEOUT);
    if (!ho.timeout.empty()) {
        if (auto d = server::auth::parse_duration(ho.timeout)) {
            budget = std::chrono::duration_cast<milliseconds>(*d);
        }
    }
    // End before Claude Code's own timeout does: a tenth of it (at least 1 s, at most 5 s) is
    // kept back for this process's start and exit.
    const auto deadline =
        start + budget - std::min(milliseconds(5'000), std::max(milliseconds(1'000), budget / 10));
    const auto left = [&] {
        return std::max(
            milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
    };
    // What the hub may use of it: the hook listens HOOK_ANSWER_MARGIN longer.
    const auto hub_left = [&] { return std::max(milliseconds(0), left() - HOOK_ANSWER_MARGIN); };
    std::string input_text;
    input_text.reserve(4096);
    std::array<char, 8192> buf{};
    while (std::cin.read(buf.data(), buf.size()) || std::cin.gcount() > 0) {
        input_text.append(buf.data(), static_cast<std::size_t>(std::cin.gcount()));
        if (input_text.size() > HOOK_INPUT_MAX) {
            return no_decision("the hook's input is too large");
        }
    }
    boost::system::error_code ec;
    auto input = json::parse(input_text, ec);
    if (ec || !input.is_object()) {
        return no_decision("the hook's input is not a JSON object");
    }
    std::string why;
    auto reported = post(
        ho.client,
        "/v1/hooks/claude",
        json::object{{"event", ho.event}, {"input", input}, {"timeout_ms", hub_left().count()}},
        std::min(left(), milliseconds(10'000)),
        why);
    if (!reported) {
        return no_decision(why);
    }
    const auto* rid = reported->as_object().if_contains("request_id");
    if (ho.event != "PermissionRequest" || rid == nullptr || !rid->is_string()) {
        return 0;
    }
    const json::value seat = reported->at("seat");
    for (;;) {
        const auto wait = std::min(hub_left(), HOOK_POLL);
        if (wait <= milliseconds(0)) {
            return no_decision("nobody answered within the hook's timeout");
        }
        auto got = post(
            ho.client,
            "/v1/hooks/claude/wait",
            json::object{{"seat", seat}, {"request_id", *rid}, {"wait_ms", wait.count()}},
            std::min(left(), wait + milliseconds(5'000)),
            why);
        if (!got) {
            return no_decision(why);
        }
        const auto& state = got->at("state").as_string();
        if (state == "allow" || state == "deny") {
            std::printf("%s\n", decision_json(got->as_object()).c_str());
            return 0;
        }
        if (state != "pending") {
            const auto* reason = got->as_object().if_contains("reason");
            return no_decision(
                "the prompt closed: "
                + (reason && reason->is_string() ? std::string(reason->get_string()) : "closed"));
        }
    }
}

// ---- sluice hooks install|uninstall|status -------------------------------------------------

struct InstallOptions {
    std::string project;  // --project DIR
    std::string settings; // --settings FILE
    std::string timeout{"10m"};
    std::string data; // --data: the hub's data dir (also written into the hook's command)
};

// The settings file asked for: --settings, else --project's settings.local.json, else the
// user's (CLAUDE_CONFIG_DIR or ~/.claude).
fs::path settings_file(const InstallOptions& o) {
    if (!o.settings.empty()) {
        return fs::absolute(o.settings);
    }
    if (!o.project.empty()) {
        return fs::absolute(o.project) / ".claude" / "settings.local.json";
    }
    if (const char* dir = std::getenv("CLAUDE_CONFIG_DIR"); dir != nullptr && *dir != '\0') {
        return fs::path(dir) / "settings.json";
    }
    const char* home = std::getenv("HOME");
    return fs::path(home != nullptr ? home : ".") / ".claude" / "settings.json";
}

// A file's bytes, or nothing when it does not exist.
std::optional<std::string> read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Where install keeps what it needs to undo itself: <data>/hooks/<FNV-1a of the path>.json
// ({"settings","original":text|null,"installed":text}).
fs::path record_file(const fs::path& data, const fs::path& settings) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : settings.string()) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    std::array<char, 17> hex{};
    std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(h));
    return data / "hooks" / (std::string(hex.data()) + ".json");
}

bool write_or_say(const fs::path& p, std::string_view bytes, unsigned mode) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (auto r = safe_write(p, bytes, mode); !r) {
        std::fprintf(
            stderr, "sluice hooks: cannot write %s: %s\n", p.c_str(), r.error().message().c_str());
        return false;
    }
    return true;
}

unsigned mode_of(const fs::path& p, unsigned fallback) {
    struct stat st {};

    return ::stat(p.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & 07777U) : fallback;
}

int cmd_install(const InstallOptions& o) {
    const auto file = settings_file(o);
    const auto data = resolve_data_dir(o.data, false);
    const auto d = server::auth::parse_duration(o.timeout);
    if (!d || d->count() <= 0) {
        std::fprintf(stderr, "sluice hooks install: --timeout takes N followed by s, m, h (10m)\n");
        return 2;
    }
    const auto current = read_bytes(file);
    std::string why;
    const auto data_flag = o.data.empty() ? std::string() : fs::absolute(o.data).string();
    auto text = with_hooks(current.value_or(""), HookEntry{this_binary(), data_flag, *d}, why);
    if (!text) {
        std::fprintf(stderr, "sluice hooks install: %s: %s\n", file.c_str(), why.c_str());
        return 1;
    }
    // The original as it was before sluice's first install (kept across installs again).
    const auto record = record_file(data, file);
    json::value original = current ? json::value(*current) : json::value(nullptr);
    if (auto old = read_bytes(record)) {
        boost::system::error_code ec;
        auto v = json::parse(*old, ec);
        if (!ec && v.is_object() && v.as_object().contains("original")) {
            original = v.at("original");
        }
    }
    const json::object rec{
        {"settings", file.string()}, {"original", original}, {"installed", *text}};
    if (!write_or_say(record, json::serialize(rec) + "\n", 0600)
        || !write_or_say(file, *text, mode_of(file, 0644))) {
        return 1;
    }
    std::printf(
        "installed sluice's hooks (%s) in %s; the original is kept in %s\n",
        "PermissionRequest, Notification, Stop, SessionStart, SessionEnd",
        file.c_str(),
        record.c_str());
    return 0;
}

int cmd_uninstall(const InstallOptions& o) {
    const auto file = settings_file(o);
    const auto record = record_file(resolve_data_dir(o.data, false), file);
    const auto current = read_bytes(file);
    std::optional<json::object> rec;
    if (auto text = read_bytes(record)) {
        boost::system::error_code ec;
        auto v = json::parse(*text, ec);
        if (!ec && v.is_object()) {
            rec = std::move(v.as_object());
        }
    }
    std::error_code ec;
    if (rec && current && rec->contains("installed") && rec->at("installed").is_string()
        && rec->at("installed").get_string() == *current) {
        // Nothing else changed it since: the original, byte for byte.
        const auto& original = rec->at("original");
        if (original.is_string()) {
            if (!write_or_say(file, original.get_string(), mode_of(file, 0644))) {
                return 1;
            }
        } else {
            fs::remove(file, ec);
        }
        fs::remove(record, ec);
        std::printf("removed sluice's hooks: %s is as it was before\n", file.c_str());
        return 0;
    }
    if (!current || installed_hooks(*current).empty()) {
        fs::remove(record, ec);
        std::printf("no sluice hooks in %s\n", file.c_str());
        return 0;
    }
    std::string why;
    auto text = without_hooks(*current, why);
    if (!text) {
        std::fprintf(stderr, "sluice hooks uninstall: %s: %s\n", file.c_str(), why.c_str());
        return 1;
    }
    if (!write_or_say(file, *text, mode_of(file, 0644))) {
        return 1;
    }
    fs::remove(record, ec);
    std::printf(
        "removed sluice's hooks from %s (changed since install: the rest kept as it is now)\n",
        file.c_str());
    return 0;
}

int cmd_status(const InstallOptions& o) {
    std::vector<fs::path> files{settings_file(o)};
    const auto dir = resolve_data_dir(o.data, false) / "hooks";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (auto text = read_bytes(e.path())) {
            boost::system::error_code pec;
            auto v = json::parse(*text, pec);
            if (!pec && v.is_object() && v.as_object().contains("settings")
                && v.at("settings").is_string()) {
                fs::path f(std::string(v.at("settings").get_string()));
                if (std::find(files.begin(), files.end(), f) == files.end()) {
                    files.push_back(std::move(f));
                }
            }
        }
    }
    for (const auto& f : files) {
        const auto text = read_bytes(f);
        const auto hooks = text ? installed_hooks(*text) : decltype(installed_hooks("")){};
        if (hooks.empty()) {
            std::printf("%s: not installed\n", f.c_str());
            continue;
        }
        std::printf("%s: installed\n", f.c_str());
        for (const auto& [event, command] : hooks) {
            std::printf("  %s: %s\n", event.c_str(), command.c_str());
        }
    }
    return 0;
}

} // namespace

void add_hooks_commands(CLI::App& app) {
    auto ho = std::make_shared<HookOptions>();
    auto* hook = app.add_subcommand(
        "hook",
        "Run as a Claude Code hook: `sluice hook claude EVENT` reads the hook's JSON on stdin "
        "and tells the hub; a PermissionRequest waits for an answer from any screen");
    hook->add_option("agent", ho->agent, "the agent whose hook this is: claude")->required();
    hook->add_option("event", ho->event, "the hook event (PermissionRequest, Notification, …)")
        ->required();
    hook->add_option("--timeout", ho->timeout, "the hook entry's timeout (default 10m)");
    hook->add_option("--hub", ho->client.hub, "the hub's URL (default: SLUICE_HUB, hub.json)");
    hook->add_option("--token", ho->client.token, "bearer token (or SLUICE_TOKEN)");
    hook->add_option("--data", ho->client.data, "the hub's data dir (default: serve's)");
    hook->parse_complete_callback([ho] { client::resolve(ho->client); });
    on_selected(hook, [ho] {
        try {
            return run_hook(*ho);
        } catch (const std::exception& e) {
            return no_decision(std::string("unexpected: ") + e.what()); // never a failed hook
        }
    });

    auto io = std::make_shared<InstallOptions>();
    auto* hooks = app.add_subcommand(
        "hooks", "Install sluice's hooks in Claude Code's settings, remove them, or show them");
    hooks->require_subcommand(1);
    auto where = [io](CLI::App* sub) {
        sub->add_option("--project", io->project, "that project's .claude/settings.local.json");
        sub->add_option("--settings", io->settings, "this settings file");
        sub->add_option("--data", io->data, "the hub's data dir (default: serve's)");
    };
    auto* install = hooks->add_subcommand(
        "install",
        "Add hooks running `sluice hook claude EVENT` (default: ~/.claude/settings.json)");
    where(install);
    install->add_option("--timeout", io->timeout, "how long a prompt waits for an answer (10m)");
    on_selected(install, [io] { return cmd_install(*io); });
    auto* uninstall = hooks->add_subcommand("uninstall", "Remove exactly the hooks install added");
    where(uninstall);
    on_selected(uninstall, [io] { return cmd_uninstall(*io); });
    auto* status = hooks->add_subcommand("status", "Say where sluice's hooks are installed");
    where(status);
    on_selected(status, [io] { return cmd_status(*io); });
}

} // namespace sluice::app
