// A seat's routes: prompts, cancel, reset, continue, permissions, history, whole frames and
// sub-agents, and the forwarding of a mirror's commands to the seat's owner.
#include "api_detail.hpp"

#include <sluice/hub/codex_sessions.hpp>
#include <sluice/server/errors.hpp>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <charconv>

namespace sluice::server::api_detail {

namespace json = boost::json;

namespace {

// GET /v1/seats/{id}/permissions: the pending prompts. POST …/permissions/{request_id}
// {"behavior":"allow"|"deny","message"?,"updated_input"?,"by"?}: the first valid answer wins
// (200 {"resolved":…}); a later one gets 409, an unknown request 404.
net::awaitable<Response> permission_route(
    const Request& req,
    const std::shared_ptr<hub::Seat>& seat,
    const std::vector<std::string>& parts) {
    if (parts.size() == 4) {
        if (req.method() != http::verb::get) {
            co_return method_not_allowed(req, "GET");
        }
        auto list = seat->async_permissions(net::use_awaitable); // named: GCC 12 co_await
        auto text = co_await std::move(list);
        co_return json_response(req, 200, R"({"permissions":)" + text + "}");
    }
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    AnswerOp op;
    if (auto refused = validate_answer(*body, parts[4], op)) {
        co_return bad(req, *refused);
    }
    const std::string behavior = op.answer.allow ? "allow" : "deny";
    const std::string by = op.by;
    auto answer = seat->async_answer_permission(std::move(op.answer), by, net::use_awaitable);
    auto r = co_await std::move(answer);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req,
        200,
        json::serialize(json::object{{"resolved", parts[4]}, {"behavior", behavior}, {"by", by}}));
}

// GET /v1/seats/{id}/frames/{seq}[?epoch=E]: the whole frame from the transcript (an oversize
// frame's full form), shared, with Range. A seq names a frame within one epoch only: with
// `epoch` (the client's, from the event id it saw the seq in) a seat that has moved to another
// epoch answers 409 instead of another conversation's frame at that position.
net::awaitable<Response> frame_route(
    const Request& req,
    const boost::urls::url_view& url,
    const std::shared_ptr<hub::Seat>& seat,
    const std::string& n) {
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    std::uint64_t seq = 0;
    const auto* end = n.data() + n.size();
    if (auto [p, ec] = std::from_chars(n.data(), end, seq); ec != std::errc{} || p != end) {
        co_return bad(req, "a frame is named by its position (a non-negative integer)");
    }
    auto read = seat->async_frame_text(seq, query_param(url, "epoch"), net::use_awaitable);
    auto text = co_await std::move(read);
    if (!text) {
        co_return error_response(req, text.error().code, text.error().message);
    }
    std::optional<Refusal> refused;
    bool unsatisfiable = false;
    const auto range =
        parse_range(req[http::field::range], (*text)->size(), refused, unsatisfiable);
    if (refused) {
        auto res = json_response(
            req, unsatisfiable ? 416 : 400, error_body(refused->code, refused->message));
        res.set(http::field::content_range, "bytes */" + std::to_string((*text)->size()));
        co_return res;
    }
    auto res = json_response(req, range ? 206 : 200, {});
    res.set(http::field::accept_ranges, "bytes");
    if (range) {
        res.set(
            http::field::content_range,
            "bytes " + std::to_string(range->first) + "-"
                + std::to_string(range->first + range->length - 1) + "/"
                + std::to_string((*text)->size()));
        res.body().share_slice(std::move(*text), range->first, range->length);
    } else {
        res.body() = std::move(*text);
    }
    co_return res;
}

// Whether a request to a seat is for its owner to answer: the commands (delete, rename,
// prompts, cancel, permission answers), and history pages and whole frames (a mirror holds the
// window, not the transcript, so the owner answers them, below the window too).
bool is_command(http::verb method, const std::vector<std::string>& parts) {
    if (parts.size() == 3) {
        return method == http::verb::delete_ || method == http::verb::patch;
    }
    if (method == http::verb::get) {
        return parts[3] == "history" || parts[3] == "frames";
    }
    return method == http::verb::post
           && (parts[3] == "messages" || parts[3] == "cancel" || parts[3] == "permissions"
               || parts[3] == "reset");
}

// Scale-out: a command for a mirror goes to the seat's owner node; its answer is the answer
// (503 with the reason when the owner is gone or does not answer).
net::awaitable<Response> forward_route(Server::Impl& s, const Request& req, const hub::Seat& seat) {
    if (!s.cfg.forwarder) {
        co_return error_response(
            req, make_error_code(errc::conflict), "the seat is owned by node " + seat.owner());
    }
    hub::ForwardedRequest fr{
        std::string(req.method_string()), std::string(req.target()), req.body()};
    auto op = hub::async_forward(
        s.cfg.forwarder, seat.owner(), std::move(fr), net::use_awaitable); // named: GCC 12
    auto [status, body] = co_await std::move(op);
    if (status == 0) {
        json::object err{{"code", "unavailable"}, {"message", body}};
        co_return json_response(req, 503, json::serialize(json::object{{"error", std::move(err)}}));
    }
    co_return json_response(req, status, std::move(body));
}

// POST /v1/seats/{id}/messages {"text":…}: 202 {"turn","queued"}.
net::awaitable<Response>
messages_route(const Request& req, const std::shared_ptr<hub::Seat>& seat) {
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    SendOp send;
    if (auto refused = validate_send(*body, send)) {
        co_return bad(req, *refused);
    }
    auto submit = seat->async_submit(std::move(send.text), net::use_awaitable);
    auto r = co_await std::move(submit);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req, 202, json::serialize(json::object{{"turn", r->turn}, {"queued", r->queued}}));
}

// POST /v1/seats/{id}/continue: a foreign session file becomes a hosted claude seat resuming it
// (201 {"seat","continued"}).
net::awaitable<Response>
continue_route(Server::Impl& s, const Request& req, const std::string& id) {
    if (req.method() != http::verb::post) {
        co_return method_not_allowed(req, "POST");
    }
    // Continued before: the same seat again (200), never a second one resuming the session.
    const bool again = s.hub.continued_seat(id) != nullptr;
    auto make = s.hub.async_continue_foreign(id, net::use_awaitable); // named: GCC 12 co_await
    auto made = co_await std::move(make);
    if (!made) {
        co_return error_response(req, made.error().code, made.error().message);
    }
    co_return json_response(
        req,
        again ? 200U : 201U,
        json::serialize(
            json::object{{"seat", (*made)->id()}, {"continued", id}, {"existing", again}}));
}

// POST /v1/seats/{id}/reset {}: the conversation starts over under a new epoch (the old
// transcript is kept); 409 while a turn runs (cancel first).
net::awaitable<Response> reset_route(const Request& req, const std::shared_ptr<hub::Seat>& seat) {
    Response not_post;
    auto body = post_body(req, not_post);
    if (!body) {
        co_return not_post;
    }
    if (!body->empty()) {
        co_return bad(req, "a reset takes no fields (send {} or nothing)");
    }
    const auto before = seat->summary().epoch;
    auto op = seat->async_reset(net::use_awaitable); // named: GCC 12 co_await
    auto r = co_await std::move(op);
    if (!r) {
        co_return error_response(req, r.error().code, r.error().message);
    }
    co_return json_response(
        req,
        200,
        json::serialize(json::object{
            {"reset", true},
            {"epoch", seat->summary().epoch},
            {"previous_epoch", before},
            {"archived", "transcript." + before + ".jsonl"}}));
}

// `?before=&turns=` of a history request (its own or a sub-agent's), as the WebSocket `more`
// op reads them: the refusal, or nothing when `out` is set.
std::optional<Refusal> more_from_query(const boost::urls::url_view& url, MoreOp& out) {
    const auto b = query_param(url, "before");
    const auto t = query_param(url, "turns");
    const json::value bv = b ? query_value(*b) : json::value(nullptr);
    const json::value tv = t ? query_value(*t) : json::value(nullptr);
    return validate_more(b ? &bv : nullptr, t ? &tv : nullptr, out);
}

// GET /v1/seats/{id}/history?before=&turns=: a page of whole turns, shared by every client
// asking for the same one.
net::awaitable<Response> history_route(
    const Request& req, const boost::urls::url_view& url, const std::shared_ptr<hub::Seat>& seat) {
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    MoreOp more;
    if (auto refused = more_from_query(url, more)) {
        co_return bad(req, *refused);
    }
    auto read = seat->async_history(more.before, more.turns, net::use_awaitable); // GCC 12: named
    auto page = co_await std::move(read);
    if (!page) {
        co_return error_response(req, page.error().code, page.error().message);
    }
    auto res = json_response(req, 200, {});
    res.body() = std::move(page->body); // shared with every client asking for this page
    co_return res;
}

json::object subagent_json(const hub::Subagent& a) {
    return json::object{
        {"agent_id", a.agent_id},
        {"tool_use_id", a.tool_use_id.empty() ? json::value(nullptr) : json::value(a.tool_use_id)},
        {"description", a.description},
        {"rows", a.rows},
        {"live", a.live}};
}

} // namespace

// GET /v1/seats/{id}/subagents: a Claude Code session's sub-agent transcripts, each with the
// Task tool_use it answers (and `by_tool_use`: tool_use id → agent id, for a page's link).
// GET /v1/seats/{id}/subagents/{agent}/history?before=&turns=: a page of one, as history.
net::awaitable<Response> subagent_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts) {
    // The path first: a path the hub does not have is a 404 whatever the method (openapi_test).
    if (parts.size() != 4 && (parts.size() != 6 || parts[5] != "history")) {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    if (req.method() != http::verb::get) {
        co_return method_not_allowed(req, "GET");
    }
    const auto& id = parts[2];
    if (parts.size() == 4) {
        auto op = s.hub.async_subagents(id, net::use_awaitable); // named: GCC 12 co_await
        auto r = co_await std::move(op);
        if (!r) {
            co_return error_response(req, r.error().code, r.error().message);
        }
        json::array arr;
        json::object links;
        for (const auto& a : *r) {
            arr.push_back(subagent_json(a));
            if (!a.tool_use_id.empty()) {
                links[a.tool_use_id] = a.agent_id;
            }
        }
        co_return json_response(
            req,
            200,
            json::serialize(
                json::object{{"subagents", std::move(arr)}, {"by_tool_use", std::move(links)}}));
    }
    MoreOp more;
    if (auto refused = more_from_query(url, more)) {
        co_return bad(req, *refused);
    }
    const auto& agent = parts[4];
    auto op = s.hub.async_subagent_history(
        id, agent, more.before, more.turns, net::use_awaitable); // named: GCC 12 co_await
    auto page = co_await std::move(op);
    if (!page) {
        co_return error_response(req, page.error().code, page.error().message);
    }
    co_return json_response(req, 200, std::move(*page));
}

net::awaitable<Response> seat_routes(
    Server::Impl& s,
    const Request& req,
    const boost::urls::url_view& url,
    const std::vector<std::string>& parts) {
    auto seat = s.hub.find(parts[2]);
    if (!seat) {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such seat: " + parts[2]);
    }
    const auto method = req.method();
    if (seat->mirror() && is_command(method, parts)) {
        co_return co_await forward_route(s, req, *seat);
    }
    if (parts.size() == 3) {
        if (method == http::verb::get) {
            co_return json_response(req, 200, json::serialize(seat_json(seat->summary(), true)));
        }
        if (method == http::verb::delete_) {
            if (seat->foreign()) {
                const bool codex = seat->summary().source == "codex";
                co_return error_response(
                    req,
                    make_error_code(errc::conflict),
                    std::string(codex ? hub::CODEX_READ_ONLY : hub::FOREIGN_READ_ONLY));
            }
            // ?purge=true deletes the folder; without it the folder is archived (kept under
            // the data dir's archive/ until retain_archives_days prunes it).
            const auto purge = query_param(url, "purge");
            if (purge && *purge != "true" && *purge != "false") {
                co_return bad(req, "query 'purge' must be true or false");
            }
            const bool purged = purge && *purge == "true";
            if (auto r = s.hub.remove(parts[2], purged); !r) {
                co_return error_response(
                    req, r.error(), "cannot delete the seat: " + r.error().message());
            }
            co_return json_response(
                req, 200, json::serialize(json::object{{"deleted", true}, {"archived", !purged}}));
        }
        if (method == http::verb::patch) {
            // {"name"?, "permission_mode"?, "model"?, "budget_usd"?} (at least one): a rename, a
            // claude seat's permission mode and model, a budget; the answer is the seat as GET
            // shows it.
            std::string why;
            auto body = parse_body(req, why);
            if (!body) {
                co_return bad(req, why);
            }
            SeatChange change;
            if (auto refused = validate_seat_change(*body, change)) {
                co_return bad(req, *refused);
            }
            // A claude seat's settings are asked of its running agent first: the PATCH answers
            // once it has answered (its refusal is the error); the rename follows a success,
            // the budget last (it restarts an idle claude seat's agent).
            if (change.name || change.settings.permission_mode || change.settings.model) {
                auto op = seat->async_change(
                    std::move(change.name),
                    std::move(change.settings),
                    net::use_awaitable); // named: GCC 12 co_await
                auto r = co_await std::move(op);
                if (!r) {
                    co_return error_response(req, r.error().code, r.error().message);
                }
            }
            if (change.budget_given) {
                auto op = seat->async_set_budget(change.budget_usd, net::use_awaitable);
                auto r = co_await std::move(op);
                if (!r) {
                    co_return error_response(req, r.error().code, r.error().message);
                }
            }
            co_return json_response(req, 200, json::serialize(seat_json(seat->summary(), true)));
        }
        co_return method_not_allowed(req, "GET, PATCH, DELETE");
    }
    const auto& action = parts[3];
    if (parts.size() == 5 && action == "frames") {
        co_return co_await frame_route(req, url, seat, parts[4]);
    }
    if (parts.size() == 5 && action != "permissions") {
        co_return error_response(
            req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
    }
    if (action == "messages") {
        co_return co_await messages_route(req, seat);
    }
    if (action == "reset") {
        co_return co_await reset_route(req, seat);
    }
    if (action == "continue") {
        co_return co_await continue_route(s, req, parts[2]);
    }
    if (action == "cancel") {
        if (method != http::verb::post) {
            co_return method_not_allowed(req, "POST");
        }
        auto cancel = seat->async_cancel(net::use_awaitable); // named: GCC 12 co_await
        const bool was = co_await std::move(cancel);
        co_return json_response(req, 200, json::serialize(json::object{{"cancelled", was}}));
    }
    if (action == "history") {
        co_return co_await history_route(req, url, seat);
    }
    if (action == "permissions") {
        co_return co_await permission_route(req, seat, parts);
    }
    co_return error_response(
        req, make_error_code(errc::not_found), "no such route: " + std::string(url.path()));
}

} // namespace sluice::server::api_detail
