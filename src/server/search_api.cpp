// GET /v1/search: full-text search over every seat the asker may watch (hub/search_indexer.hpp).
#include "api_detail.hpp"

#include <sluice/hub/search_indexer.hpp>
#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

#include <array>
#include <charconv>
#include <ctime>
#include <unordered_map>

namespace sluice::server {

namespace json = boost::json;

namespace {

std::string iso_time(std::int64_t ms) {
    const auto secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    std::array<char, 32> buf{};
    std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &tm);
    std::array<char, 8> frac{};
    std::snprintf(frac.data(), frac.size(), ".%03dZ", static_cast<int>(ms % 1000));
    return std::string(buf.data()) + frac.data();
}

json::array snippet_json(const std::vector<hub::SnippetPiece>& pieces) {
    json::array out;
    for (const auto& p : pieces) {
        out.push_back(json::object{{p.match ? "match" : "text", p.text}});
    }
    return out;
}

std::optional<std::int64_t> integer(std::string_view s) {
    std::int64_t v{};
    const auto* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    if (r.ec != std::errc{} || r.ptr != end || v < 0) {
        return std::nullopt;
    }
    return v;
}

} // namespace

namespace api_detail {

net::awaitable<Response>
search_response(Server::Impl& s, const Request& req, const boost::urls::url_view& url) {
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
        co_return method_not_allowed(req, "GET");
    }
    const auto& indexer = s.hub.search();
    if (!indexer) {
        if (!s.hub.search_off().empty()) {
            co_return error_response(
                req, make_error_code(errc::overloaded), "search is off: " + s.hub.search_off());
        }
        co_return error_response(
            req, make_error_code(errc::not_found), "this hub keeps no search index");
    }
    hub::SearchQuery q;
    q.q = query_param(url, "q").value_or("");
    if (q.q.empty()) {
        co_return bad(req, "query 'q' is required: the text looked for");
    }
    if (q.q.size() > hub::SEARCH_QUERY_MAX_BYTES) {
        co_return bad(
            req,
            "query 'q' is longer than " + std::to_string(hub::SEARCH_QUERY_MAX_BYTES) + " bytes");
    }
    q.seat = query_param(url, "seat");
    q.project = query_param(url, "project");
    q.source = query_param(url, "source");
    if (auto since = query_param(url, "since")) {
        auto ms = hub::parse_time_ms(*since);
        if (!ms) {
            co_return bad(
                req, "query 'since' is a day (YYYY-MM-DD) or a time (YYYY-MM-DDTHH:MM:SS), UTC");
        }
        q.since_ms = *ms;
    }
    if (auto limit = query_param(url, "limit")) {
        auto n = integer(*limit);
        if (!n || *n < 1 || *n > static_cast<std::int64_t>(hub::SEARCH_LIMIT_MAX)) {
            co_return bad(req, "query 'limit' is 1 to " + std::to_string(hub::SEARCH_LIMIT_MAX));
        }
        q.limit = static_cast<std::size_t>(*n);
    }
    if (auto cursor = query_param(url, "cursor")) {
        auto n = integer(*cursor);
        if (!n || *n < 1) {
            co_return bad(req, "query 'cursor' is a previous answer's next_cursor");
        }
        q.cursor = *n;
    }
    const auto text = q.q;
    auto run = indexer->async_search(std::move(q), net::use_awaitable); // named: GCC 12 co_await
    auto page = co_await std::move(run);
    if (!page) {
        co_return error_response(
            req, make_error_code(errc::overloaded), "too many searches wait: try again");
    }
    // Only seats listed now: a removed seat's hits are gone at once, whatever the index holds.
    std::unordered_map<std::string, hub::SeatSummary> seats;
    for (auto& summary : s.hub.summaries()) {
        auto id = summary.id;
        seats.emplace(std::move(id), std::move(summary));
    }
    json::array hits;
    for (auto& h : page->hits) {
        auto it = seats.find(h.seat);
        if (it == seats.end()) {
            continue;
        }
        // The index numbers a file's frames from its first; a session file longer than a window
        // is numbered by its seat from its end until counted: its seq is known once the seat
        // knows where its numbering starts (null until then; `index` names the frame).
        const auto& origin = it->second.origin;
        json::value seq = nullptr;
        if (h.archived) {
            seq = h.seq; // a hosted seat's archived epoch: numbered from 0
        } else if (origin) {
            seq = *origin + h.seq;
        }
        json::object o{
            {"seat", h.seat},
            {"name", it->second.name},
            {"epoch", h.epoch.empty() ? it->second.epoch : h.epoch},
            {"seq", std::move(seq)},
            {"index", h.seq},
            {"turn", h.turn},
            {"time", iso_time(h.time_ms)},
            {"archived", h.archived},
            {"source", h.source},
            {"project", h.project},
            {"snippet", snippet_json(h.snippet)}};
        hits.push_back(std::move(o));
    }
    const auto progress = indexer->progress();
    json::object body{
        {"query", text},
        {"hits", std::move(hits)},
        {"next_cursor",
         page->next_cursor ? json::value(std::to_string(*page->next_cursor))
                           : json::value(nullptr)},
        {"match", page->scanned ? "scan" : "trigram"},
        {"indexing",
         json::object{
             {"done", progress.done},
             {"total", progress.total},
             {"queued", progress.queued},
             {"complete", progress.queued == 0 && progress.done == progress.total},
             {"rebuilt", progress.rebuilt}}}};
    co_return json_response(req, 200, json::serialize(body));
}

} // namespace api_detail

} // namespace sluice::server
