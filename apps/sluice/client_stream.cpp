// `sluice send` and `sluice tail`: a seat's stream printed as it comes (the turn's text, tool
// calls and their output, permission prompts; or its frames as JSON lines).
#include "client.hpp"

#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

namespace sluice::app::client {

namespace json = boost::json;

namespace {

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

} // namespace

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

} // namespace sluice::app::client
