// `sluice token new|list|revoke`: viewer tokens, stored hashed in the hub's data dir.
#include "commands.hpp"
#include "locations.hpp"

#include <sluice/core/clock.hpp>
#include <sluice/server/auth.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::app {

namespace {

namespace auth = server::auth;

std::string when(std::int64_t unix) {
    return unix == 0
               ? std::string("never")
               : iso8601_utc(std::chrono::system_clock::time_point(std::chrono::seconds(unix)));
}

/// How long a new viewer link lives unless --expires says otherwise: a link shared by mistake
/// stops working by itself.
constexpr std::string_view DEFAULT_EXPIRES = "24h";

struct TokenOptions {
    std::string data; // resolved by resolve_data_dir() (locations.hpp)
    bool viewer{false};
    std::string seat;
    std::string expires;
    std::string hub; // --hub, for the link; else the running hub's own addresses (hub.json)
    std::string id;
};

int cmd_new(const TokenOptions& o) {
    // Viewer tokens are the only kind minted (the owner's is the data dir's): --viewer may be
    // left out. A new link expires after 24 h unless --expires says otherwise ("never").
    std::chrono::seconds ttl{0};
    if (o.expires != "never") {
        auto d =
            auth::parse_duration(o.expires.empty() ? DEFAULT_EXPIRES : std::string_view(o.expires));
        if (!d) {
            std::fprintf(
                stderr,
                "sluice token new: --expires takes N followed by s, m, h or d (default 24h), or "
                "never\n");
            return 2;
        }
        ttl = *d;
    }
    auto m = auth::mint_viewer(o.data, o.seat, ttl);
    if (!m) {
        std::fprintf(
            stderr,
            "sluice token new: cannot store the token in %s: %s\n",
            o.data.c_str(),
            m.error().message().c_str());
        return 1;
    }
    // The links go to where the hub really is: --hub, else what the running hub wrote about
    // itself (its public URL, or each address it listens on), else the default address.
    std::vector<std::string> pages;
    if (!o.hub.empty()) {
        pages.push_back(normalize_hub_url(o.hub));
    } else if (auto f = read_hub_file(o.data); f && !f->pages.empty()) {
        pages = f->pages;
    } else {
        pages.push_back(resolve_hub_url({}, o.data));
    }
    std::printf("%s\n", m->token.c_str());
    std::fprintf(
        stderr,
        "viewer token %s (seat %s, expires %s); share:\n",
        m->entry.id.c_str(),
        m->entry.seat.empty() ? "any" : m->entry.seat.c_str(),
        when(m->entry.expires).c_str());
    for (const auto& page : pages) {
        std::fprintf(stderr, "  %s/#token=%s\n", page.c_str(), m->token.c_str());
    }
    return 0;
}

int cmd_list(const TokenOptions& o) {
    auto list = auth::read_viewers(o.data);
    if (!list) {
        std::fprintf(
            stderr,
            "sluice token list: cannot read %s: %s\n",
            o.data.c_str(),
            list.error().message().c_str());
        return 1;
    }
    std::printf("%-8s %-6s %-16s %-24s %s\n", "ID", "ROLE", "SEAT", "EXPIRES", "CREATED");
    for (const auto& t : *list) {
        std::printf(
            "%-8s %-6s %-16s %-24s %s\n",
            t.id.c_str(),
            "viewer",
            t.seat.empty() ? "*" : t.seat.c_str(),
            when(t.expires).c_str(),
            when(t.created).c_str());
    }
    return 0;
}

int cmd_revoke(const TokenOptions& o) {
    auto r = auth::revoke_viewer(o.data, o.id);
    if (!r) {
        std::fprintf(
            stderr,
            "sluice token revoke: cannot update %s: %s\n",
            o.data.c_str(),
            r.error().message().c_str());
        return 1;
    }
    if (!*r) {
        std::fprintf(stderr, "sluice token revoke: no one token has the id %s\n", o.id.c_str());
        return 1;
    }
    std::printf("revoked %s\n", o.id.c_str());
    return 0;
}

} // namespace

void add_token_command(CLI::App& app) {
    auto* token = app.add_subcommand("token", "Viewer tokens: new, list, revoke");
    token->require_subcommand(1);
    auto o = std::make_shared<TokenOptions>();
    auto data = [o](CLI::App* sub) {
        sub->add_option(
            "--data", o->data, "the hub's data dir (where tokens are stored; default: serve's)");
        sub->parse_complete_callback([o] { o->data = resolve_data_dir(o->data, false).string(); });
    };
    auto* made = token->add_subcommand("new", "Mint a viewer token and print it");
    data(made);
    made->add_flag(
        "--viewer", o->viewer, "a viewer token: may watch, never act (the only kind; optional)");
    made->add_option("--seat", o->seat, "the one seat it may watch (default: every seat)");
    made->add_option(
        "--expires", o->expires, "lifetime: N followed by s, m, h or d, or never (default: 24h)");
    made->add_option("--hub", o->hub, "the hub's URL, for the link printed");
    on_selected(made, [o] { return cmd_new(*o); });

    auto* list = token->add_subcommand("list", "List the viewer tokens (never the tokens)");
    data(list);
    on_selected(list, [o] { return cmd_list(*o); });

    auto* revoke = token->add_subcommand("revoke", "Revoke a viewer token by its id");
    data(revoke);
    revoke->add_option("id", o->id, "the token's id (from token list)")->required();
    on_selected(revoke, [o] { return cmd_revoke(*o); });
}

} // namespace sluice::app
