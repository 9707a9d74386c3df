// `sluice seats|rm|new|continue|send|approve|deny|tail|cancel|reset|stats`: clients of a running
// hub over its HTTP API. The verbs are here; `send` and `tail` stream (client_stream.cpp); the
// HTTP calls they share are in client_http.cpp.
#include "client.hpp"
#include "commands.hpp"

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace sluice::app {

namespace json = boost::json;

namespace client {

namespace {

// Bytes for a person: 1023 B, 1.5 KiB, 12.0 MiB.
std::string human_bytes(std::uint64_t n) {
    if (n < 1024) {
        return std::to_string(n) + " B";
    }
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n) / 1024;
    std::size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(units)) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

int cmd_seats(const ClientOptions& o, bool du) {
    auto v = call(o, "GET", "/v1/seats");
    if (!v) {
        return 1;
    }
    // --du: each seat's folder from /v1/stats ("-" for a seat with none here: a Claude Code
    // session read in place, a mirror of another node's seat).
    json::object disk;
    if (du) {
        auto st = call(o, "GET", "/v1/stats");
        if (!st) {
            return 1;
        }
        if (!st->at("disk").is_object()) {
            std::fprintf(stderr, "sluice: the hub's writer is busy; ask again in a moment\n");
            return 1;
        }
        disk = st->at("disk").as_object();
    }
    // COST: each seat's total from GET /v1/usage ("-": nothing used; "?": tokens whose model
    // has no known price). The hub keeps no usage for a seat of another node: "-" too.
    auto usage = call(o, "GET", "/v1/usage?group=seat");
    if (!usage) {
        return 1;
    }
    std::map<std::string, std::string> cost;
    for (const auto& r : usage->at("rows").as_array()) {
        const auto& c = r.at("cost_usd");
        std::array<char, 32> buf{};
        if (c.is_number()) {
            std::snprintf(buf.data(), buf.size(), "$%.2f", c.to_number<double>());
        }
        cost[std::string(r.at("key").as_string())] = c.is_number() ? buf.data() : "?";
    }
    const auto cost_of = [&](const json::object& s) -> std::string {
        const auto it = cost.find(std::string(s.at("id").as_string()));
        return it == cost.end() ? "-" : it->second;
    };
    const auto disk_of = [&](const json::value& s) -> std::string {
        const auto* b = disk.at("seats").as_object().if_contains(s.at("id").as_string());
        return b != nullptr ? human_bytes(b->to_number<std::uint64_t>()) : "-";
    };
    // Columns wide enough for a Claude Code session's id (c-<uuid>: 38 characters). SOURCE:
    // "hub" for this hub's seats, "claude" for a session read from its file; PROJECT: the
    // session's folder (its last component).
    std::printf(
        "%-38s %-6s %-8s %-11s %6s %7s %9s ",
        "SEAT",
        "SOURCE",
        "AGENT",
        "STATE",
        "TURNS",
        "FRAMES",
        "COST");
    if (du) {
        std::printf("%10s ", "DISK");
    }
    std::printf("%-16s %s\n", "PROJECT", "NAME");
    const auto text = [](const json::object& so, const char* k) {
        const auto* f = so.if_contains(k);
        return f != nullptr && f->is_string() ? std::string(f->get_string()) : std::string();
    };
    for (const auto& s : v->at("seats").as_array()) {
        const auto& so = s.as_object();
        // A Claude Code session not opened yet has no known turn count ("turns": null).
        const auto& turns = s.at("turns");
        const std::string t =
            turns.is_null() ? "?" : std::to_string(turns.to_number<std::uint64_t>());
        const std::string source = text(so, "source").empty() ? "hub" : text(so, "source");
        std::string project = text(so, "project");
        if (const auto cut = project.find_last_of('/');
            cut != std::string::npos && cut + 1 < project.size()) {
            project = project.substr(cut + 1);
        }
        std::printf(
            "%-38s %-6s %-8s %-11s %6s %7llu %9s ",
            text(so, "id").c_str(),
            source.c_str(),
            text(so, "agent").c_str(),
            text(so, "state").c_str(),
            t.c_str(),
            static_cast<unsigned long long>(s.at("frames").to_number<std::uint64_t>()),
            cost_of(so).c_str());
        if (du) {
            std::printf("%10s ", disk_of(s).c_str());
        }
        std::printf("%-16s ", project.empty() ? "-" : project.c_str());
        std::printf("%s\n", text(so, "name").c_str());
        if (const auto* why = so.if_contains("reason"); why != nullptr && why->is_string()) {
            std::printf("  reason: %s\n", std::string(why->as_string()).c_str());
        }
        if (const auto* w = so.if_contains("warnings"); w != nullptr && w->is_array()) {
            for (const auto& b : w->as_array()) {
                std::printf(
                    "  warning: line %llu: %s\n",
                    static_cast<unsigned long long>(b.at("line").to_number<std::uint64_t>()),
                    std::string(b.at("reason").as_string()).c_str());
            }
        }
    }
    if (du) {
        std::printf(
            "disk: %s in all, %s of it removed seats kept in archive/\n",
            human_bytes(disk.at("bytes").to_number<std::uint64_t>()).c_str(),
            human_bytes(disk.at("archive_bytes").to_number<std::uint64_t>()).c_str());
    }
    return 0;
}

struct NewOptions {
    std::string name, agent, cwd, model, permission_mode, cmd;
    double budget_usd{-1}; // below 0: none given
};

int cmd_new(const ClientOptions& o, NewOptions n) {
    if (!n.cwd.empty() && std::filesystem::path(n.cwd).is_relative()) {
        // As a shell user means it: from this folder, not from the hub's workspace root.
        n.cwd = (std::filesystem::current_path() / n.cwd).lexically_normal().string();
    }
    json::object body;
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string*>{"name", &n.name},
          {"agent", &n.agent},
          {"cwd", &n.cwd},
          {"model", &n.model},
          {"permission_mode", &n.permission_mode},
          {"cmd", &n.cmd}}) {
        if (!value->empty()) {
            body[key] = *value;
        }
    }
    if (n.budget_usd >= 0) {
        body["budget_usd"] = n.budget_usd;
    }
    auto v = call(o, "POST", "/v1/seats", json::serialize(body));
    if (!v) {
        return 1;
    }
    std::printf("%s\n", std::string(v->at("seat").as_string()).c_str());
    return 0;
}

} // namespace

int cmd_answer(
    const ClientOptions& o,
    const std::string& seat,
    std::string request,
    bool allow,
    const std::string& message) {
    if (request.empty()) {
        auto v = call(o, "GET", "/v1/seats/" + seat + "/permissions");
        if (!v) {
            return 1;
        }
        const auto& list = v->at("permissions").as_array();
        if (list.empty()) {
            std::fprintf(stderr, "sluice: no permission prompt is pending on %s\n", seat.c_str());
            return 1;
        }
        request = std::string(list.front().at("request_id").as_string());
    }
    json::object body{{"behavior", allow ? "allow" : "deny"}, {"by", "cli"}};
    if (!message.empty()) {
        body["message"] = message;
    }
    auto v =
        call(o, "POST", "/v1/seats/" + seat + "/permissions/" + request, json::serialize(body));
    if (!v) {
        return 1;
    }
    std::printf("%s %s\n", allow ? "allowed" : "denied", request.c_str());
    return 0;
}

} // namespace client

void add_client_commands(CLI::App& app) {
    auto o = std::make_shared<client::ClientOptions>();
    auto common = [o](CLI::App* sub) {
        sub->add_option(
            "--hub",
            o->hub,
            "the hub's URL or host:port (default: SLUICE_HUB, else the running hub's hub.json in "
            "the data dir, else http://127.0.0.1:8420)");
        sub->add_option("--token", o->token, "bearer token (or SLUICE_TOKEN)");
        sub->add_option(
            "--data",
            o->data,
            "the hub's data dir, to read its token and address from (default: serve's)");
        sub->parse_complete_callback([o] { client::resolve(*o); });
    };
    auto* seats = app.add_subcommand("seats", "List the hub's seats");
    common(seats);
    auto du = std::make_shared<bool>(false);
    seats->add_flag("--du", *du, "also each seat's disk use (its folder in the data dir)");
    on_selected(seats, [o, du] { return client::cmd_seats(*o, *du); });

    auto* rm = app.add_subcommand(
        "rm", "Remove a seat (its folder archived in the data dir, or deleted with --purge)");
    common(rm);
    auto rm_seat = std::make_shared<std::string>();
    auto purge = std::make_shared<bool>(false);
    rm->add_option("seat", *rm_seat, "seat id")->required();
    rm->add_flag("--purge", *purge, "delete the seat's folder instead of archiving it");
    on_selected(rm, [o, rm_seat, purge] {
        auto v =
            client::call(*o, "DELETE", "/v1/seats/" + *rm_seat + (*purge ? "?purge=true" : ""));
        if (!v) {
            return 1;
        }
        std::printf(
            "removed %s (%s)\n",
            rm_seat->c_str(),
            *purge ? "its folder deleted" : "its folder archived");
        return 0;
    });

    auto* create = app.add_subcommand("new", "Create a seat and print its id");
    common(create);
    auto nopt = std::make_shared<client::NewOptions>();
    create->add_option("name", nopt->name, "the seat's name");
    create->add_option("--agent", nopt->agent, "builtin|process|claude|codex|acp");
    create->add_option(
        "--cmd",
        nopt->cmd,
        "acp: the agent's command line, one the hub allows (serve --acp-agent), e.g. "
        "\"qwen --acp\"");
    create->add_option(
        "--cwd",
        nopt->cwd,
        "claude, codex, acp: working directory (inside the workspace root; a relative one "
        "is taken from the current folder)");
    create->add_option("--model", nopt->model, "the model (default: the agent's)");
    create->add_option(
        "--permission-mode",
        nopt->permission_mode,
        "claude: its permission mode; codex: its approval policy (untrusted, on-request, never)");
    create
        ->add_option(
            "--budget-usd", nopt->budget_usd, "what the seat may spend in all, in USD (no limit)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("USD");
    on_selected(create, [o, nopt] { return client::cmd_new(*o, *nopt); });

    auto* send = app.add_subcommand("send", "Send a prompt and print the answer as it streams");
    common(send);
    auto seat = std::make_shared<std::string>();
    auto text = std::make_shared<std::string>();
    send->add_option("seat", *seat, "seat id")->required();
    send->add_option("text", *text, "the prompt")->required();
    auto show_thinking = std::make_shared<bool>(false);
    send->add_flag("--thinking", *show_thinking, "also print the agent's thinking");
    auto send_full = std::make_shared<bool>(false);
    send->add_flag("--full", *send_full, "fetch oversize frames whole (default: cut, with a hint)");
    auto send_json = std::make_shared<bool>(false);
    send->add_flag("--json", *send_json, "print the turn's frames as JSON lines (for scripts)");
    send->footer(
        "Ctrl-C asks the hub to stop the turn and waits for it to end (\"turn cancelled\" is\n"
        "printed; exit 130); a second Ctrl-C detaches at once (exit 130): the turn goes on on\n"
        "the hub, and `sluice cancel SEAT` stops it. Ctrl-C before the prompt reached the hub\n"
        "sends nothing.\n"
        "A permission prompt asks allow? [y/N] when stdin is a terminal; it also prints the\n"
        "command that answers it from elsewhere: `sluice approve SEAT REQUEST` (or deny).\n"
        "Exit status: 0 the turn ended; 1 it failed, or could not be followed; 2 bad usage;\n"
        "3 stopped at a permission prompt (stdin not a terminal, or --json): its request id is\n"
        "on stdout, and the command that answers it on stderr; 130 stopped or detached with\n"
        "Ctrl-C.");
    on_selected(send, [o, seat, text, show_thinking, send_full, send_json] {
        return client::cmd_send(*o, *seat, *text, *show_thinking, *send_full, *send_json);
    });

    auto* tail = app.add_subcommand("tail", "Follow a seat's frames (resumes across hub restarts)");
    common(tail);
    auto tseat = std::make_shared<std::string>();
    auto previews = std::make_shared<bool>(false);
    tail->add_option("seat", *tseat, "seat id")->required();
    tail->add_flag(
        "--previews",
        *previews,
        "also previews, gaps and turn events: on a terminal the answer as it streams (a lost "
        "stretch marked), else JSON lines");
    auto tail_full = std::make_shared<bool>(false);
    tail->add_flag("--full", *tail_full, "fetch oversize frames whole (default: cut, with a hint)");
    auto tail_json = std::make_shared<bool>(false);
    tail->add_flag(
        "--json", *tail_json, "frames as JSON lines (the default when stdout is not a terminal)");
    on_selected(tail, [o, tseat, previews, tail_full, tail_json] {
        return client::cmd_tail(*o, *tseat, *previews, *tail_full, *tail_json);
    });

    auto* cancel = app.add_subcommand("cancel", "Cancel a seat's running turn");
    common(cancel);
    auto cseat = std::make_shared<std::string>();
    cancel->add_option("seat", *cseat, "seat id")->required();
    on_selected(cancel, [o, cseat] {
        auto v = client::call(*o, "POST", "/v1/seats/" + *cseat + "/cancel");
        if (!v) {
            return 1;
        }
        std::printf("%s\n", v->at("cancelled").as_bool() ? "cancelled" : "no turn was running");
        return 0;
    });

    auto* reset = app.add_subcommand(
        "reset",
        "Start a seat's conversation over (a new epoch; the old transcript is kept on disk)");
    common(reset);
    auto rseat = std::make_shared<std::string>();
    reset->add_option("seat", *rseat, "seat id")->required();
    on_selected(reset, [o, rseat] {
        auto v = client::call(*o, "POST", "/v1/seats/" + *rseat + "/reset");
        if (!v) {
            return 1;
        }
        std::printf(
            "reset: epoch %s (was %s, kept as %s)\n",
            std::string(v->at("epoch").as_string()).c_str(),
            std::string(v->at("previous_epoch").as_string()).c_str(),
            std::string(v->at("archived").as_string()).c_str());
        return 0;
    });

    auto* cont = app.add_subcommand(
        "continue",
        "Continue a Claude Code session (a read-only seat) as a claude seat; print its id");
    common(cont);
    auto fseat = std::make_shared<std::string>();
    cont->add_option("seat", *fseat, "the session's seat id")->required();
    on_selected(cont, [o, fseat] {
        auto v = client::call(*o, "POST", "/v1/seats/" + *fseat + "/continue");
        if (!v) {
            return 1;
        }
        std::printf("%s\n", std::string(v->at("seat").as_string()).c_str());
        return 0;
    });

    for (const bool allow : {true, false}) {
        auto* sub = app.add_subcommand(
            allow ? "approve" : "deny",
            allow ? "Allow a seat's pending permission prompt (default: the oldest)"
                  : "Deny a seat's pending permission prompt (default: the oldest)");
        common(sub);
        auto aseat = std::make_shared<std::string>();
        auto request = std::make_shared<std::string>();
        auto message = std::make_shared<std::string>();
        sub->add_option("seat", *aseat, "seat id")->required();
        sub->add_option("request", *request, "request id (default: the oldest pending)");
        if (!allow) {
            sub->add_option("--message", *message, "what the agent is told");
        }
        on_selected(sub, [o, aseat, request, message, allow] {
            return client::cmd_answer(*o, *aseat, *request, allow, *message);
        });
    }

    client::add_manage_commands(app, o, common);
    client::add_usage_command(app, o, common);
    client::add_search_command(app, o, common);

    auto* stats = app.add_subcommand("stats", "Print the hub's stats as JSON");
    common(stats);
    on_selected(stats, [o] {
        auto v = client::call(*o, "GET", "/v1/stats");
        if (!v) {
            return 1;
        }
        std::printf("%s\n", json::serialize(*v).c_str());
        return 0;
    });
}

} // namespace sluice::app
