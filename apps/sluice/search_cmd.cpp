// `sluice search QUERY`: full-text search over the hub's sessions (GET /v1/search), one hit a
// line — seat, seq, turn, time and the snippet with the matches marked — or the JSON with --json.
#include "client.hpp"
#include "commands.hpp"

#include <boost/json.hpp>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

namespace sluice::app::client {

using app::on_selected;

namespace json = boost::json;

namespace {

struct SearchFlags {
    std::string query, seat, project, source, since;
    int limit{20};
    bool json{false};
};

// `s` for a URL's query string (RFC 3986 unreserved characters kept).
std::string url_encoded(std::string_view s) {
    static constexpr char HEX[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-'
            || c == '_' || c == '.' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += HEX[u >> 4];
            out += HEX[u & 15];
        }
    }
    return out;
}

// A snippet on one line: newlines shown as spaces, matches between markers (bold on a terminal,
// else [[ ]]).
std::string snippet_line(const json::array& pieces, bool tty) {
    std::string out;
    for (const auto& p : pieces) {
        const auto& o = p.as_object();
        const bool match = o.contains("match");
        std::string text(o.at(match ? "match" : "text").as_string());
        for (auto& c : text) {
            if (c == '\n' || c == '\r' || c == '\t') {
                c = ' ';
            }
        }
        if (match) {
            out += tty ? "\x1b[1m" : "[[";
            out += text;
            out += tty ? "\x1b[0m" : "]]";
        } else {
            out += text;
        }
    }
    return out;
}

int cmd_search(const ClientOptions& o, const SearchFlags& f) {
    std::string path = "/v1/search?q=" + url_encoded(f.query) + "&limit=" + std::to_string(f.limit);
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string*>{"seat", &f.seat},
          {"project", &f.project},
          {"source", &f.source},
          {"since", &f.since}}) {
        if (!value->empty()) {
            path += std::string("&") + key + "=" + url_encoded(*value);
        }
    }
    auto v = call(o, "GET", path);
    if (!v) {
        return 1;
    }
    if (f.json) {
        std::printf("%s\n", json::serialize(*v).c_str());
        return 0;
    }
    const bool tty = ::isatty(STDOUT_FILENO) != 0;
    const auto& hits = v->at("hits").as_array();
    for (const auto& h : hits) {
        const auto& ho = h.as_object();
        // Null while the hub counts a long session file (numbered from its end until then).
        const auto& seq = ho.at("seq");
        const std::string where =
            seq.is_null()
                ? "seq ? (frame " + std::to_string(ho.at("index").to_number<std::int64_t>())
                      + " from the file's start; known once the seat is opened and counted)"
                : "seq " + std::to_string(seq.to_number<std::int64_t>());
        std::printf(
            "%s  %s  turn %lld  %s%s\n    %s\n",
            std::string(ho.at("seat").as_string()).c_str(),
            where.c_str(),
            static_cast<long long>(ho.at("turn").to_number<std::int64_t>()),
            std::string(ho.at("time").as_string()).c_str(),
            ho.at("archived").as_bool() ? "  (archived)" : "",
            snippet_line(ho.at("snippet").as_array(), tty).c_str());
    }
    const auto& ix = v->at("indexing").as_object();
    if (hits.empty()) {
        std::printf("no hits\n");
    }
    if (!ix.at("complete").as_bool()) {
        std::printf(
            "(indexing: %lld of %lld files read; more hits may come)\n",
            static_cast<long long>(ix.at("done").to_number<std::int64_t>()),
            static_cast<long long>(ix.at("total").to_number<std::int64_t>()));
    }
    return 0;
}

} // namespace

void add_search_command(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common) {
    auto* search = app.add_subcommand("search", "Find text in every session (case ignored)");
    common(search);
    auto f = std::make_shared<SearchFlags>();
    search
        ->add_option(
            "QUERY", f->query, "the text looked for: a word, part of one, a command, a path")
        ->required();
    search->add_option("--seat", f->seat, "only this seat");
    search->add_option("--project", f->project, "only seats of this project (working directory)");
    search->add_option("--source", f->source, "only seats of this source (sluice, claude)");
    search->add_option("--since", f->since, "only frames since this day or time (UTC)");
    search->add_option("--limit", f->limit, "hits at most")->check(CLI::Range(1, 200));
    search->add_flag("--json", f->json, "print the hub's JSON answer");
    on_selected(search, [o, f] { return cmd_search(*o, *f); });
}

} // namespace sluice::app::client
