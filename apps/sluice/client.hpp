// The parts the client commands share across their files: the hub's HTTP API (client_http.cpp),
// the seat verbs (client_cmd.cpp) and the streaming commands (client_stream.cpp).
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/net/sse.hpp>

#include <boost/json/value.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
} // namespace CLI

namespace sluice::app::client {

/// Where the hub is and how to authenticate to it: the flags every client command takes.
struct ClientOptions {
    std::string hub;   ///< --hub: the hub's URL (resolved by resolve(): locations.hpp)
    std::string token; ///< --token (else SLUICE_TOKEN, else `data`'s)
    std::string data;  ///< --data: the hub's data dir, to read its token and hub.json
};

/// Fills what the flags left: the data dir (the hub's default), then the hub's URL (--hub,
/// SLUICE_HUB, the data dir's hub.json, http://127.0.0.1:8420), a missing scheme added.
void resolve(ClientOptions& o);

/// The token: --token, else SLUICE_TOKEN, else the one in the hub's data dir (when this user
/// can read it: the same default as `serve`, or --data); "" when there is none.
std::string client_token(const ClientOptions& o);

// ---- the hub's HTTP API (client_http.cpp) ------------------------------------------------------

/// One JSON request to the hub (a blocking call on this thread).
/// @return the answer; nullopt after a one-line error on stderr (the hub unreachable, an HTTP
/// error with the hub's message, an answer that is not JSON), or without it when `quiet`.
std::optional<boost::json::value> call(
    const ClientOptions& o,
    const std::string& method,
    const std::string& path,
    const std::string& body = {},
    bool quiet = false);

/// The epoch of an event id "<epoch>:<seq>" ("" when there is none).
std::string_view epoch_of(std::string_view id);

/// The row to show for frame `seq` of `seat`: a reference form (an oversize frame, its large
/// blocks cut) is fetched whole with `full`, in `epoch` when known; else a hint goes to stderr
/// and the cut form is shown. `failed` is set when the fetch fails (the cut form is returned).
boost::json::value shown_row(
    const ClientOptions& o,
    const std::string& seat,
    std::string_view epoch,
    std::uint64_t seq,
    boost::json::value row,
    bool full,
    bool& failed);

/// Follows a seat's events (blocking), calling `on_event` for each and `on_connected` on each
/// `connected` or `resumed` event; reconnects with Last-Event-ID after a drop (a hub restart)
/// until `on_event` returns false, `stop` is set or `cancel` is cancelled.
/// @return false when the stream cannot be followed: an event past this client's limit (it would
/// come again on every reconnect, so it ends the stream with a message instead of a reconnect
/// loop), no such seat, or the hub refused it.
bool follow(
    const ClientOptions& o,
    const std::string& seat,
    const std::function<bool(const sse::Event&)>& on_event,
    std::atomic<bool>& stop,
    const std::function<void()>& on_connected = {},
    const CancellationToken& cancel = {});

// ---- the seat verbs (client_cmd.cpp) -----------------------------------------------------------

/// `sluice approve|deny`: answers permission prompt `request` of `seat` (the oldest pending when
/// empty), with `message` for the agent when not empty. @return the exit status (0 on success).
int cmd_answer(
    const ClientOptions& o,
    const std::string& seat,
    std::string request,
    bool allow,
    const std::string& message);

// ---- renaming and settings (client_manage.cpp)
// ---------------------------------------------------

/// Adds `sluice rename SEAT NAME` and `sluice set SEAT --mode M --model M` to `app`; `common`
/// adds the flags every client command takes (into `o`).
void add_manage_commands(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common);

/// Adds `sluice search QUERY` (search_cmd.cpp) to `app`.
void add_search_command(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common);

/// Adds `sluice usage [--by seat|project|model|day]` (usage_cmd.cpp) to `app`.
void add_usage_command(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common);

// ---- the streaming commands (client_stream.cpp) ------------------------------------------------

/// `sluice send`: sends `text` to `seat` and prints its turn as it streams (`show_thinking`: the
/// agent's thinking too; `full`: oversize frames fetched whole; `rows`: the turn's frames as
/// JSON lines, for scripts). Ctrl-C asks the hub to stop the turn and waits for its end; a
/// second detaches (the turn goes on). @return the exit status: 0 the turn ended, 1 it failed
/// or could not be followed, 3 a permission prompt waits (not a TTY, or `rows`), 130 stopped
/// or detached with Ctrl-C.
int cmd_send(
    const ClientOptions& o,
    const std::string& seat,
    const std::string& text,
    bool show_thinking,
    bool full,
    bool rows);

/// `sluice tail`: prints `seat`'s frames as they land, following across hub restarts: readable
/// on a terminal, JSON lines otherwise or with `rows` (`previews`: previews, gaps and turn
/// events too, as JSON). @return the exit status (1: not followed).
int cmd_tail(const ClientOptions& o, const std::string& seat, bool previews, bool full, bool rows);

} // namespace sluice::app::client
