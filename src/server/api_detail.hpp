// What the API's two files share: the small request helpers (bodies, refusals, a seat's JSON).
// Private to src/server.
#pragma once

#include "impl.hpp"

#include <sluice/server/validate.hpp>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/url/url_view.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::api_detail {

/// A seat's summary as JSON (`detail`: with the window and the agent's settings).
boost::json::object seat_json(const hub::SeatSummary& s, bool detail);

/// Parses a JSON object body; nullopt (and a message) when it is not one.
std::optional<boost::json::object> parse_body(const Request& req, std::string& why);

/// Reads an optional string field; false (and a message) when present but not a string.
bool string_field(
    const boost::json::object& o, std::string_view key, std::string& out, std::string& why);

/// 400 with `why`.
Response bad(const Request& req, std::string_view why);

/// The answer to a refusal (its code's status, its message).
Response bad(const Request& req, const Refusal& r);

/// 405, naming the method refused and the ones the route takes.
Response method_not_allowed(const Request& req, std::string_view allowed);

/// A POST's JSON object body; otherwise `refused` is set to the 405 or 400 answering it.
std::optional<boost::json::object> post_body(const Request& req, Response& refused);

/// /v1/seats/{id}[/{action}[/{arg}]]: a seat's own routes (seat_api.cpp); a mirror's commands
/// go to the owner.
net::awaitable<Response> seat_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts);

/// /v1/seats/{id}/subagents[/{agent}/history]: a Claude Code session's sub-agents (seat_api.cpp).
net::awaitable<Response> subagent_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts);

/// /v1/hooks/claude[/wait]: a terminal Claude Code session's hooks (hook_api.cpp).
net::awaitable<Response>
hook_routes(Server::Impl& s, const Request& req, const std::vector<std::string>& parts);

/// /v1/push/key and /v1/push/subscriptions[/{id}]: Web Push (push_api.cpp). `who`: whose
/// subscriptions (a viewer's are scoped to the seat it may watch).
net::awaitable<Response> push_routes(
    Server::Impl& s, const Request& req, const std::vector<std::string>& parts, const Access& who);

/// GET /v1/usage: the usage ledger's totals by seat, project, model or day (usage_api.cpp).
Response usage_response(Server::Impl& s, const Request& req, const boost::urls::url_view& url);

/// GET /v1/search: hits of the full-text index, with snippets (search_api.cpp).
net::awaitable<Response>
search_response(Server::Impl& s, const Request& req, const boost::urls::url_view& url);

} // namespace sluice::server::api_detail
