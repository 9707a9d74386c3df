// `sluice seats|new|send|tail|cancel|stats`: clients of a running hub over its HTTP API.
#include "commands.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/net/sse.hpp>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace sluice::app {

namespace {

namespace json = boost::json;

struct ClientOptions {
    std::string hub{"http://127.0.0.1:8420"};
    std::string token;
};

transport::HttpHeaders auth(const ClientOptions& o) {
    transport::HttpHeaders h;
    std::string token = o.token;
    if (token.empty() && std::getenv("SLUICE_TOKEN") != nullptr) {
        token = std::getenv("SLUICE_TOKEN");
    }
    if (!token.empty()) {
        h.emplace_back("Authorization", "Bearer " + token);
    }
    return h;
}

transport::HttpOptions client_options(bool streaming) {
    transport::HttpOptions opt;
    opt.max_attempts = 1;
    opt.proxy = "";
    opt.connect_timeout = std::chrono::seconds(5);
    opt.first_byte_timeout = std::chrono::seconds(30);
    opt.idle_timeout =
        streaming ? std::chrono::milliseconds(60'000) : std::chrono::milliseconds(30'000);
    return opt;
}

// One JSON request; prints a clear error and returns nullopt on failure.
std::optional<json::value> call(
    const ClientOptions& o,
    const std::string& method,
    const std::string& path,
    const std::string& body = {}) {
    transport::HttpClient client(client_options(false));
    transport::HttpRequest req{method, o.hub + path, auth(o), body};
    if (!body.empty()) {
        req.headers.emplace_back("Content-Type", "application/json");
    }
    std::string got;
    auto r = client.request_blocking(req, CancellationToken{}, [&](std::string_view c) {
        got.append(c);
        return true;
    });
    if (!r) {
        std::fprintf(
            stderr,
            "sluice: cannot reach the hub at %s: %s\n",
            o.hub.c_str(),
            client.error_message().c_str());
        return std::nullopt;
    }
    const std::string& text = r->status / 100 == 2 ? got : r->body;
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (r->status / 100 != 2) {
        std::string msg = text;
        if (!ec && v.is_object() && v.as_object().contains("error")) {
            msg = std::string(v.at("error").at("message").as_string());
        }
        std::fprintf(
            stderr,
            "sluice: %s %s: HTTP %u: %s\n",
            method.c_str(),
            path.c_str(),
            r->status,
            msg.c_str());
        return std::nullopt;
    }
    if (ec) {
        std::fprintf(stderr, "sluice: the hub answered something that is not JSON\n");
        return std::nullopt;
    }
    return v;
}

// Whether `row` is an oversize frame's reference form (large blocks cut; see frame_ref.hpp).
bool is_reference_form(const json::value& row) {
    return row.is_object() && row.as_object().contains("sluice_ref");
}

// The row to show for frame `seq`: a reference form is fetched whole with `full` (else a hint
// goes to stderr and the cut form is shown). `failed` is set when the fetch fails.
json::value shown_row(
    const ClientOptions& o,
    const std::string& seat,
    std::uint64_t seq,
    json::value row,
    bool full,
    bool& failed) {
    if (!is_reference_form(row)) {
        return row;
    }
    if (full) {
        if (auto whole = call(o, "GET", "/v1/seats/" + seat + "/frames/" + std::to_string(seq))) {
            return std::move(*whole);
        }
        failed = true;
        return row;
    }
    const auto& ref = row.at("sluice_ref");
    std::fprintf(
        stderr,
        "sluice: frame %llu is %llu bytes; its large blocks are shown cut (head and tail). "
        "--full prints it whole (GET /v1/seats/%s/frames/%llu)\n",
        static_cast<unsigned long long>(seq),
        static_cast<unsigned long long>(ref.at("bytes").to_number<std::uint64_t>()),
        seat.c_str(),
        static_cast<unsigned long long>(seq));
    return row;
}

// Follows a seat's events, calling `on_event` for each; reconnects with Last-Event-ID after a
// drop (a hub restart) until `on_event` returns false or `stop` is set. Returns false when the
// stream cannot be followed: an event past this client's limit (it would come again on every
// reconnect, so it ends the stream with a message instead of a reconnect loop) or no seat.
bool follow(
    const ClientOptions& o,
    const std::string& seat,
    const std::function<bool(const sse::Event&)>& on_event,
    std::atomic<bool>& stop,
    const std::function<void()>& on_connected = {},
    const CancellationToken& cancel = {}) {
    std::string last;
    while (!stop) {
        transport::HttpClient client(client_options(true));
        transport::HttpRequest req{"GET", o.hub + "/v1/seats/" + seat + "/events", auth(o), {}};
        if (!last.empty()) {
            req.headers.emplace_back("Last-Event-ID", last);
        }
        sse::Parser parser;
        std::vector<sse::Event> events;
        bool finished = false;
        bool too_large = false;
        auto r = client.request_blocking(req, cancel, [&](std::string_view chunk) {
            events.clear();
            if (auto ec = parser.feed(chunk, events)) {
                too_large = ec == make_error_code(errc::payload_too_large);
                return false;
            }
            for (const auto& e : events) {
                if (!e.id.empty()) {
                    last = e.id;
                }
                if ((e.type == "connected" || e.type == "resumed") && on_connected) {
                    on_connected();
                }
                if (!on_event(e)) {
                    finished = true;
                    return false;
                }
            }
            return !stop.load();
        });
        if (too_large) {
            std::fprintf(
                stderr,
                "sluice: an event after %s is larger than this client's limit (%zu bytes, "
                "payload_too_large); stopping instead of reconnecting to the same event\n",
                last.empty() ? "the start" : last.c_str(),
                sse::Limits{}.max_line);
            return false;
        }
        if (finished || stop || cancel.is_cancelled()) {
            return true;
        }
        if (r && r->status == 404) {
            std::fprintf(stderr, "sluice: no such seat: %s\n", seat.c_str());
            return false;
        }
        std::fprintf(stderr, "sluice: stream dropped; reconnecting…\n");
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return true; // stopped
}

int cmd_seats(const ClientOptions& o) {
    auto v = call(o, "GET", "/v1/seats");
    if (!v) {
        return 1;
    }
    std::printf(
        "%-16s %-8s %-8s %6s %7s  %s\n", "SEAT", "AGENT", "STATE", "TURNS", "FRAMES", "NAME");
    for (const auto& s : v->at("seats").as_array()) {
        std::printf(
            "%-16s %-8s %-8s %6llu %7llu  %s\n",
            std::string(s.at("id").as_string()).c_str(),
            std::string(s.at("agent").as_string()).c_str(),
            std::string(s.at("state").as_string()).c_str(),
            static_cast<unsigned long long>(s.at("turns").to_number<std::uint64_t>()),
            static_cast<unsigned long long>(s.at("frames").to_number<std::uint64_t>()),
            std::string(s.at("name").as_string()).c_str());
    }
    return 0;
}

int cmd_new(const ClientOptions& o, const std::string& name, const std::string& agent) {
    json::object body;
    if (!name.empty()) {
        body["name"] = name;
    }
    if (!agent.empty()) {
        body["agent"] = agent;
    }
    auto v = call(o, "POST", "/v1/seats", json::serialize(body));
    if (!v) {
        return 1;
    }
    std::printf("%s\n", std::string(v->at("seat").as_string()).c_str());
    return 0;
}

int cmd_send(const ClientOptions& o, const std::string& seat, const std::string& text, bool full) {
    std::mutex mu;
    std::condition_variable cv;
    bool connected = false;
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> my_turn{0};
    std::atomic<int> status{1};
    bool printed_text = false;
    std::string streamed; // preview text of the assistant message being written
    std::map<std::uint64_t, std::string> ended_turns; // turn → how it ended (guarded by mu)
    CancellationToken done_early;
    std::atomic<bool> stream_failed{false};
    std::thread reader([&] {
        stream_failed = !follow(
            o,
            seat,
            [&](const sse::Event& e) {
                if (e.type == "preview") {
                    auto v = json::parse(e.data);
                    if (v.at("kind").as_string() == "text") {
                        const std::string delta(v.at("delta").as_string());
                        std::fputs(delta.c_str(), stdout);
                        std::fflush(stdout);
                        streamed += delta;
                        printed_text = true;
                    }
                } else if (e.type == "frame") {
                    // The frame is the truth: print whatever the previews missed (dropped or
                    // superseded), so the answer on the terminal is always complete.
                    auto v = json::parse(e.data);
                    bool fetch_failed = false;
                    const auto row = shown_row(
                        o,
                        seat,
                        v.at("seq").to_number<std::uint64_t>(),
                        v.at("row"),
                        full,
                        fetch_failed);
                    if (fetch_failed) {
                        status = 1;
                    }
                    if (row.at("type").as_string() == "assistant") {
                        std::string answer;
                        const auto* content = row.at("message").as_object().if_contains("content");
                        if (content != nullptr && content->is_array()) {
                            for (const auto& b : content->as_array()) {
                                if (b.is_object() && b.as_object().contains("text")
                                    && b.at("type").as_string() == "text") {
                                    answer += std::string(b.at("text").as_string());
                                }
                            }
                        }
                        if (answer.rfind(streamed, 0) == 0) {
                            std::fputs(answer.substr(streamed.size()).c_str(), stdout);
                        } else {
                            std::fprintf(stdout, "\n%s", answer.c_str());
                        }
                        if (!answer.empty()) {
                            std::fputc('\n', stdout);
                            printed_text = false;
                        }
                        std::fflush(stdout);
                        streamed.clear();
                    }
                } else if (e.type == "turn") {
                    auto v = json::parse(e.data);
                    const auto t = v.at("turn").to_number<std::uint64_t>();
                    const std::string state(v.at("state").as_string());
                    if (state != "started") {
                        std::lock_guard lock(mu);
                        ended_turns[t] = state;
                    }
                    if (t == my_turn.load() && state != "started") {
                        if (printed_text) {
                            std::fputc('\n', stdout);
                        }
                        if (state != "ended") {
                            std::fprintf(
                                stderr,
                                "sluice: turn %s%s%s\n",
                                state.c_str(),
                                v.as_object().contains("error") ? ": " : "",
                                v.as_object().contains("error")
                                    ? std::string(v.at("error").as_string()).c_str()
                                    : "");
                        }
                        status = state == "ended" ? 0 : 1;
                        return false;
                    }
                }
                return true;
            },
            stop,
            [&] {
                std::lock_guard lock(mu);
                connected = true;
                cv.notify_all();
            },
            done_early);
        if (stream_failed) {
            status = 1;
        }
        std::lock_guard lock(mu);
        connected = true;
        cv.notify_all();
    });
    {
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::seconds(10), [&] { return connected; });
    }
    if (stream_failed) {
        reader.join();
        return 1;
    }
    auto v = call(
        o,
        "POST",
        "/v1/seats/" + seat + "/messages",
        json::serialize(json::object{{"text", text}}));
    if (!v) {
        stop = true;
        reader.join();
        return 1;
    }
    my_turn = v->at("turn").to_number<std::uint64_t>();
    {
        // The turn may have ended before its number was known here (a fast agent).
        std::lock_guard lock(mu);
        if (auto it = ended_turns.find(my_turn.load()); it != ended_turns.end()) {
            status = it->second == "ended" ? 0 : 1;
            done_early.cancel();
        }
    }
    if (v->at("queued").as_bool()) {
        std::fprintf(stderr, "sluice: queued behind the running turn\n");
    }
    reader.join();
    return status.load();
}

int cmd_tail(const ClientOptions& o, const std::string& seat, bool previews, bool full) {
    std::atomic<bool> stop{false};
    bool failed = false;
    const bool followed = follow(
        o,
        seat,
        [&](const sse::Event& e) {
            if (e.type == "frame") {
                auto v = json::parse(e.data);
                const auto seq = v.at("seq").to_number<std::uint64_t>();
                const auto row = shown_row(o, seat, seq, v.at("row"), full, failed);
                std::printf("%s\n", json::serialize(row).c_str());
            } else if (e.type == "connected") {
                auto v = json::parse(e.data);
                auto seq = v.at("window").at("first").to_number<std::uint64_t>();
                for (const auto& f : v.at("window").at("frames").as_array()) {
                    const auto row = shown_row(o, seat, seq++, f, full, failed);
                    std::printf("%s\n", json::serialize(row).c_str());
                }
            } else if (previews && (e.type == "preview" || e.type == "gap" || e.type == "turn")) {
                std::printf("{\"event\":\"%s\",\"data\":%s}\n", e.type.c_str(), e.data.c_str());
            }
            std::fflush(stdout);
            return true;
        },
        stop);
    return followed && !failed ? 0 : 1;
}

} // namespace

void add_client_commands(CLI::App& app) {
    auto o = std::make_shared<ClientOptions>();
    auto common = [o](CLI::App* sub) {
        sub->add_option("--hub", o->hub, "the hub's URL");
        sub->add_option("--token", o->token, "bearer token (or SLUICE_TOKEN)");
    };
    auto* seats = app.add_subcommand("seats", "List the hub's seats");
    common(seats);
    on_selected(seats, [o] { return cmd_seats(*o); });

    auto* create = app.add_subcommand("new", "Create a seat and print its id");
    common(create);
    auto name = std::make_shared<std::string>();
    auto agent = std::make_shared<std::string>();
    create->add_option("name", *name, "the seat's name");
    create->add_option("--agent", *agent, "builtin|process");
    on_selected(create, [o, name, agent] { return cmd_new(*o, *name, *agent); });

    auto* send = app.add_subcommand("send", "Send a prompt and print the answer as it streams");
    common(send);
    auto seat = std::make_shared<std::string>();
    auto text = std::make_shared<std::string>();
    send->add_option("seat", *seat, "seat id")->required();
    send->add_option("text", *text, "the prompt")->required();
    auto send_full = std::make_shared<bool>(false);
    send->add_flag("--full", *send_full, "fetch oversize frames whole (default: cut, with a hint)");
    on_selected(
        send, [o, seat, text, send_full] { return cmd_send(*o, *seat, *text, *send_full); });

    auto* tail = app.add_subcommand("tail", "Follow a seat's frames (resumes across hub restarts)");
    common(tail);
    auto tseat = std::make_shared<std::string>();
    auto previews = std::make_shared<bool>(false);
    tail->add_option("seat", *tseat, "seat id")->required();
    tail->add_flag("--previews", *previews, "also print previews, gaps and turn events");
    auto tail_full = std::make_shared<bool>(false);
    tail->add_flag("--full", *tail_full, "fetch oversize frames whole (default: cut, with a hint)");
    on_selected(tail, [o, tseat, previews, tail_full] {
        return cmd_tail(*o, *tseat, *previews, *tail_full);
    });

    auto* cancel = app.add_subcommand("cancel", "Cancel a seat's running turn");
    common(cancel);
    auto cseat = std::make_shared<std::string>();
    cancel->add_option("seat", *cseat, "seat id")->required();
    on_selected(cancel, [o, cseat] {
        auto v = call(*o, "POST", "/v1/seats/" + *cseat + "/cancel");
        if (!v) {
            return 1;
        }
        std::printf("%s\n", v->at("cancelled").as_bool() ? "cancelled" : "no turn was running");
        return 0;
    });

    auto* stats = app.add_subcommand("stats", "Print the hub's stats as JSON");
    common(stats);
    on_selected(stats, [o] {
        auto v = call(*o, "GET", "/v1/stats");
        if (!v) {
            return 1;
        }
        std::printf("%s\n", json::serialize(*v).c_str());
        return 0;
    });
}

} // namespace sluice::app
