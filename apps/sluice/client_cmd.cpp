// `sluice seats|new|continue|send|approve|deny|tail|cancel|reset|stats`: clients of a running
// hub over its HTTP API.
#include "commands.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/net/sse.hpp>
#include <sluice/runtime/stream_json.hpp>
#include <sluice/server/auth.hpp>

#include <boost/json.hpp>

#include <unistd.h>

#include <array>
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
    std::string data{"sluice-data"};
};

// The token: --token, else SLUICE_TOKEN, else the one in the hub's data dir (when this user
// can read it: the same default as `serve`, or --data).
transport::HttpHeaders auth(const ClientOptions& o) {
    transport::HttpHeaders h;
    std::string token = o.token;
    if (token.empty() && std::getenv("SLUICE_TOKEN") != nullptr) {
        token = std::getenv("SLUICE_TOKEN");
    }
    if (token.empty()) {
        token = server::auth::read_owner_token(o.data).value_or("");
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
    if (method != "GET") {
        req.headers.emplace_back("Content-Type", "application/json"); // the hub takes JSON only
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
        if (r->status == 401) {
            std::fprintf(
                stderr,
                "sluice: pass --token or SLUICE_TOKEN, or --data DIR of the hub (its token is "
                "in DIR/token)\n");
        }
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

// The epoch of an event id "<epoch>:<seq>" ("" when there is none).
std::string_view epoch_of(std::string_view id) {
    const auto colon = id.find(':');
    return colon == std::string_view::npos ? std::string_view{} : id.substr(0, colon);
}

// The row to show for frame `seq`: a reference form is fetched whole with `full` (else a hint
// goes to stderr and the cut form is shown). `failed` is set when the fetch fails.
json::value shown_row(
    const ClientOptions& o,
    const std::string& seat,
    std::string_view epoch,
    std::uint64_t seq,
    json::value row,
    bool full,
    bool& failed) {
    if (!is_reference_form(row)) {
        return row;
    }
    if (full) {
        // The epoch the seq was seen in: a seat whose conversation was replaced since answers
        // 409, never another conversation's frame at that position.
        auto target = "/v1/seats/" + seat + "/frames/" + std::to_string(seq);
        if (!epoch.empty()) {
            target += "?epoch=" + std::string(epoch);
        }
        if (auto whole = call(o, "GET", target)) {
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
        if (r && (r->status == 401 || r->status == 403)) {
            std::fprintf(
                stderr,
                "sluice: the hub refused the stream (HTTP %u): %s\n",
                r->status,
                r->body.c_str());
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
        // A Claude Code session not opened yet has no known turn count ("turns": null).
        const auto& turns = s.at("turns");
        const std::string t =
            turns.is_null() ? "-" : std::to_string(turns.to_number<std::uint64_t>());
        std::printf(
            "%-16s %-8s %-8s %6s %7llu  %s\n",
            std::string(s.at("id").as_string()).c_str(),
            std::string(s.at("agent").as_string()).c_str(),
            std::string(s.at("state").as_string()).c_str(),
            t.c_str(),
            static_cast<unsigned long long>(s.at("frames").to_number<std::uint64_t>()),
            std::string(s.at("name").as_string()).c_str());
        const auto& so = s.as_object();
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
    return 0;
}

struct NewOptions {
    std::string name, agent, cwd, model, permission_mode;
};

int cmd_new(const ClientOptions& o, const NewOptions& n) {
    json::object body;
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string*>{"name", &n.name},
          {"agent", &n.agent},
          {"cwd", &n.cwd},
          {"model", &n.model},
          {"permission_mode", &n.permission_mode}}) {
        if (!value->empty()) {
            body[key] = *value;
        }
    }
    auto v = call(o, "POST", "/v1/seats", json::serialize(body));
    if (!v) {
        return 1;
    }
    std::printf("%s\n", std::string(v->at("seat").as_string()).c_str());
    return 0;
}

// Answers permission prompt `request` of `seat` (the oldest pending when empty); 0 on success.
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

// The last `lines` lines of `text` (a tool's output tail on the terminal).
std::string tail_lines(const std::string& text, std::size_t lines) {
    std::size_t pos = text.size();
    while (pos > 0 && (text[pos - 1] == '\n')) {
        --pos;
    }
    const std::size_t end = pos;
    std::size_t n = 0;
    while (pos > 0) {
        if (text[pos - 1] == '\n' && ++n == lines) {
            break;
        }
        --pos;
    }
    return (pos > 0 ? "…\n" : "") + text.substr(pos, end - pos);
}

// A tool result's content as text (a string, or text blocks).
std::string result_text(const json::value& content) {
    if (content.is_string()) {
        return std::string(content.as_string());
    }
    std::string out;
    if (content.is_array()) {
        for (const auto& b : content.as_array()) {
            if (b.is_object() && b.as_object().contains("text") && b.at("text").is_string()) {
                out += std::string(b.at("text").as_string());
            }
        }
    }
    return out;
}

// What `sluice send` prints of a turn besides its text: tool calls and a tail of their output,
// thinking (with --thinking), notices, and permission prompts.
struct TurnPrinter {
    bool thinking{false};
    bool at_line_start{true};

    void text(const std::string& s) {
        if (s.empty()) {
            return;
        }
        std::fputs(s.c_str(), stdout);
        at_line_start = s.back() == '\n';
        std::fflush(stdout);
    }

    void line(const std::string& s) {
        if (!at_line_start) {
            std::fputc('\n', stdout);
        }
        std::fprintf(stdout, "%s\n", s.c_str());
        at_line_start = true;
        std::fflush(stdout);
    }

    // An assistant row's tool calls and thinking.
    void assistant_blocks(const json::array& content) {
        for (const auto& b : content) {
            if (!b.is_object()) {
                continue;
            }
            const auto& bo = b.as_object();
            const auto* type = bo.if_contains("type");
            if (type == nullptr || !type->is_string()) {
                continue;
            }
            if (*type == "tool_use") {
                std::string name = bo.contains("name") && bo.at("name").is_string()
                                       ? std::string(bo.at("name").as_string())
                                       : "tool";
                const auto* in = bo.if_contains("input");
                std::string arg = in == nullptr ? "" : json::serialize(*in);
                if (in != nullptr && in->is_object() && in->as_object().contains("command")
                    && in->at("command").is_string()) {
                    arg = std::string(in->at("command").as_string());
                }
                if (arg.size() > 200) {
                    arg = arg.substr(0, 200) + "…";
                }
                line(std::string("⏺ ").append(name).append("(").append(arg).append(")"));
            } else if (
                *type == "thinking" && thinking && bo.contains("thinking")
                && bo.at("thinking").is_string()) {
                line("✻ " + std::string(bo.at("thinking").as_string()));
            }
        }
    }

    // A user row's tool results: a tail of each.
    void tool_results(const json::array& content) {
        for (const auto& b : content) {
            if (!b.is_object() || !b.as_object().contains("type")
                || b.at("type") != "tool_result") {
                continue;
            }
            const auto* c = b.as_object().if_contains("content");
            std::string out = c == nullptr ? "" : tail_lines(result_text(*c), 5);
            const auto* err = b.as_object().if_contains("is_error");
            const bool failed = err != nullptr && err->is_bool() && err->as_bool();
            std::string indented;
            for (const char ch : out) {
                indented += ch;
                if (ch == '\n') {
                    indented += "    ";
                }
            }
            line(std::string("  ⎿ ") + (failed ? "error: " : "") + indented);
        }
    }
};

// What `sluice send` prints while its turn streams: previews as they come, what each frame adds
// (text the previews missed, tool calls and results, notices, permission prompts), and how
// the turn it waits for ends. Called on the reader thread; `mu` guards `ended_turns`.
class SendWatch {
public:
    SendWatch(const ClientOptions& o, const std::string& seat, bool show_thinking, bool full)
        : o_(o)
        , seat_(seat)
        , full_(full)
        , interactive_(::isatty(STDIN_FILENO) == 1) {
        printer_.thinking = show_thinking;
    }

    std::mutex mu;
    std::map<std::uint64_t, std::string> ended_turns; // turn → how it ended (guarded by mu)
    std::atomic<std::uint64_t> my_turn{0};
    std::atomic<int> status{1};

    // One event of the seat's stream; false ends the stream.
    bool on_event(const sse::Event& e) {
        if (e.type == "preview") {
            auto v = json::parse(e.data);
            if (v.at("kind").as_string() == "text") {
                const std::string delta(v.at("delta").as_string());
                printer_.text(delta);
                streamed_ += delta;
                printed_text_ = true;
            }
            return true;
        }
        if (e.type == "frame") {
            return on_frame(json::parse(e.data), epoch_of(e.id));
        }
        if (e.type == "connected" || e.type == "resumed") {
            return on_connected(json::parse(e.data));
        }
        if (e.type == "turn") {
            return on_turn(json::parse(e.data));
        }
        return true;
    }

private:
    // The frame is the truth: print whatever the previews missed (dropped or superseded), so
    // the answer on the terminal is always complete.
    bool on_frame(const json::value& v, std::string_view epoch) {
        bool fetch_failed = false;
        const auto row = shown_row(
            o_,
            seat_,
            epoch,
            v.at("seq").to_number<std::uint64_t>(),
            v.at("row"),
            full_,
            fetch_failed);
        if (fetch_failed) {
            status = 1;
        }
        const auto type = row.at("type").as_string();
        if (type == "system") {
            return on_system(row.as_object());
        }
        if (type == "user") {
            const auto* content = row.at("message").as_object().if_contains("content");
            if (content != nullptr && content->is_array()) {
                printer_.tool_results(content->as_array());
            }
        } else if (type == "assistant") {
            on_assistant(row);
        }
        return true;
    }

    bool on_system(const json::object& ro) {
        const std::string sub(
            ro.contains("subtype") && ro.at("subtype").is_string() ? ro.at("subtype").as_string()
                                                                   : "");
        if (auto notice = runtime::stream_json::notice_text(ro); !notice.empty()) {
            printer_.line("notice: " + notice);
        } else if (sub == "permission_request") {
            return on_permission(ro);
        } else if (sub == "permission_resolved") {
            printer_.line(
                "permission " + std::string(ro.at("behavior").as_string()) + " by "
                + std::string(ro.at("by").as_string()));
        } else if (sub == "conversation_reset") {
            printer_.line("conversation reset: a new conversation starts here");
        }
        return true;
    }

    bool on_permission(const json::object& ro) {
        const std::string id(ro.at("request_id").as_string());
        const std::string tool(ro.at("tool_name").as_string());
        const std::string title(ro.at("title").as_string());
        printer_.line("permission: " + tool + ": " + title);
        if (const auto* in = ro.if_contains("input")) {
            printer_.line("  " + json::serialize(*in));
        }
        if (!interactive_) {
            // A script answers with `sluice approve|deny SEAT REQUEST`.
            std::printf("%s\n", id.c_str());
            std::fflush(stdout);
            status = 3;
            return false;
        }
        std::fprintf(stdout, "allow? [y/N] ");
        std::fflush(stdout);
        std::array<char, 16> answer{};
        const bool yes = std::fgets(answer.data(), answer.size(), stdin) != nullptr
                         && (answer[0] == 'y' || answer[0] == 'Y');
        (void)cmd_answer(o_, seat_, id, yes, yes ? "" : "denied from the CLI");
        printer_.at_line_start = true;
        return true;
    }

    void on_assistant(const json::value& row) {
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
        if (answer.starts_with(streamed_)) {
            printer_.text(answer.substr(streamed_.size()));
        } else {
            printer_.line(answer);
        }
        if (!answer.empty()) {
            printer_.text(printer_.at_line_start ? "" : "\n");
            printed_text_ = false;
        }
        if (content != nullptr && content->is_array()) {
            printer_.assistant_blocks(content->as_array());
        }
        streamed_.clear();
    }

    // A reconnect (the hub restarted) that finds the seat idle: the turn this waits for ended
    // while the hub was down (it was closed "interrupted").
    bool on_connected(const json::value& v) {
        const auto* st = v.as_object().if_contains("state");
        if (++connections_ > 1 && my_turn.load() > 0 && st != nullptr && st->is_string()
            && st->as_string() == "idle") {
            if (printed_text_) {
                std::fputc('\n', stdout);
            }
            std::fprintf(stderr, "sluice: turn interrupted: the hub restarted\n");
            status = 1;
            return false;
        }
        return true;
    }

    bool on_turn(const json::value& v) {
        const auto t = v.at("turn").to_number<std::uint64_t>();
        const std::string state(v.at("state").as_string());
        if (state != "started") {
            std::lock_guard lock(mu);
            ended_turns[t] = state;
        }
        if (t != my_turn.load() || state == "started") {
            return true;
        }
        if (printed_text_ && !printer_.at_line_start) {
            std::fputc('\n', stdout);
        }
        if (state != "ended") {
            const auto* error = v.as_object().if_contains("error");
            const std::string why = error != nullptr && error->is_string()
                                        ? ": " + std::string(error->get_string())
                                        : "";
            std::fprintf(stderr, "sluice: turn %s%s\n", state.c_str(), why.c_str());
        }
        status = state == "ended" ? 0 : 1;
        return false;
    }

    const ClientOptions& o_;
    const std::string& seat_;
    bool full_;
    bool interactive_;
    TurnPrinter printer_;
    bool printed_text_{false};
    std::string streamed_; // preview text of the assistant message being written
    int connections_{0};   // streams opened
};

int cmd_send(
    const ClientOptions& o,
    const std::string& seat,
    const std::string& text,
    bool show_thinking,
    bool full) {
    SendWatch watch(o, seat, show_thinking, full);
    std::condition_variable cv;
    bool connected = false;
    std::atomic<bool> stop{false};
    CancellationToken done_early;
    std::atomic<bool> stream_failed{false};
    std::thread reader([&] {
        stream_failed = !follow(
            o,
            seat,
            [&](const sse::Event& e) { return watch.on_event(e); },
            stop,
            [&] {
                std::lock_guard lock(watch.mu);
                connected = true;
                cv.notify_all();
            },
            done_early);
        if (stream_failed) {
            watch.status = 1;
        }
        std::lock_guard lock(watch.mu);
        connected = true;
        cv.notify_all();
    });
    {
        std::unique_lock lock(watch.mu);
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
    watch.my_turn = v->at("turn").to_number<std::uint64_t>();
    {
        // The turn may have ended before its number was known here (a fast agent).
        std::lock_guard lock(watch.mu);
        if (auto it = watch.ended_turns.find(watch.my_turn.load()); it != watch.ended_turns.end()) {
            watch.status = it->second == "ended" ? 0 : 1;
            done_early.cancel();
        }
    }
    if (v->at("queued").as_bool()) {
        std::fprintf(stderr, "sluice: queued behind the running turn\n");
    }
    reader.join();
    return watch.status.load();
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
                const auto row = shown_row(o, seat, epoch_of(e.id), seq, v.at("row"), full, failed);
                std::printf("%s\n", json::serialize(row).c_str());
            } else if (e.type == "connected") {
                auto v = json::parse(e.data);
                auto seq = v.at("window").at("first").to_number<std::uint64_t>();
                const std::string epoch(v.at("epoch").as_string());
                for (const auto& f : v.at("window").at("frames").as_array()) {
                    const auto row = shown_row(o, seat, epoch, seq++, f, full, failed);
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
        sub->add_option("--data", o->data, "the hub's data dir, to read its token from");
    };
    auto* seats = app.add_subcommand("seats", "List the hub's seats");
    common(seats);
    on_selected(seats, [o] { return cmd_seats(*o); });

    auto* create = app.add_subcommand("new", "Create a seat and print its id");
    common(create);
    auto nopt = std::make_shared<NewOptions>();
    create->add_option("name", nopt->name, "the seat's name");
    create->add_option("--agent", nopt->agent, "builtin|process|claude");
    create->add_option("--cwd", nopt->cwd, "claude: working directory (inside the workspace root)");
    create->add_option("--model", nopt->model, "the model (default: the agent's)");
    create->add_option("--permission-mode", nopt->permission_mode, "claude: its permission mode");
    on_selected(create, [o, nopt] { return cmd_new(*o, *nopt); });

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
    on_selected(send, [o, seat, text, show_thinking, send_full] {
        return cmd_send(*o, *seat, *text, *show_thinking, *send_full);
    });

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

    auto* reset = app.add_subcommand(
        "reset",
        "Start a seat's conversation over (a new epoch; the old transcript is kept on disk)");
    common(reset);
    auto rseat = std::make_shared<std::string>();
    reset->add_option("seat", *rseat, "seat id")->required();
    on_selected(reset, [o, rseat] {
        auto v = call(*o, "POST", "/v1/seats/" + *rseat + "/reset");
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
        auto v = call(*o, "POST", "/v1/seats/" + *fseat + "/continue");
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
            return cmd_answer(*o, *aseat, *request, allow, *message);
        });
    }

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
