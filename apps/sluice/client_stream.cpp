// `sluice send`: a prompt sent and its turn printed as it streams (the turn's text, tool calls
// and their output, permission prompts; or its frames as JSON lines with --json), Ctrl-C handled.
#include "client.hpp"
#include "turn_printer.hpp"

#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace sluice::app::client {

namespace json = boost::json;

namespace {

// How often a y/N prompt asks the hub whether it was answered elsewhere: every tenth 100 ms
// poll of stdin, once a second.
constexpr int ANSWERED_CHECK_POLLS = 10;

// What `sluice send` prints while its turn streams: previews as they come, what each frame adds
// (text the previews missed, tool calls and results, notices, permission prompts), and how
// the turn it waits for ends. Called on the reader thread; `mu` guards `ended_turns`.
class SendWatch {
public:
    SendWatch(
        const ClientOptions& o, const std::string& seat, bool show_thinking, bool full, bool rows)
        : o_(o)
        , seat_(seat)
        , full_(full)
        , rows_(rows)
        , interactive_(!rows && ::isatty(STDIN_FILENO) == 1) {
        printer_.thinking = show_thinking;
    }

    std::mutex mu;
    std::map<std::uint64_t, std::string> ended_turns; // turn → how it ended (guarded by mu)
    std::atomic<std::uint64_t> my_turn{0};
    std::atomic<std::uint64_t> started_turn{0}; // the newest turn seen starting
    std::atomic<int> status{1};
    /// Set once the person pressed Ctrl-C (the reader stops waiting at a y/N prompt, and a
    /// queued turn of ours is stopped when it starts, through `stop_turn`).
    std::atomic<bool> interrupted{false};
    std::function<void()> stop_turn;

    // One event of the seat's stream; false ends the stream.
    bool on_event(const sse::Event& e) {
        if (rows_ && e.type == "frame") {
            return on_row(json::parse(e.data), epoch_of(e.id));
        }
        if (rows_ && e.type == "preview") {
            return true;
        }
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
    // --json: the turn's frames as JSON lines (a script's view); a permission prompt ends it
    // as a non-interactive send does (exit 3).
    bool on_row(const json::value& v, std::string_view epoch) {
        const auto row = shown(v, epoch);
        std::printf("%s\n", json::serialize(row).c_str());
        std::fflush(stdout);
        const auto& ro = row.as_object();
        const auto* sub = ro.if_contains("subtype");
        if (ro.at("type") == "system" && sub != nullptr && *sub == "permission_request") {
            waiting_for_answer(std::string(ro.at("request_id").as_string()));
            status = 3;
            return false;
        }
        return true;
    }

    // The row of a `frame` event as shown (cut, or fetched whole with --full); a failed fetch
    // makes the exit status 1.
    json::value shown(const json::value& v, std::string_view epoch) {
        bool fetch_failed = false;
        auto row = shown_row(
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
        return row;
    }

    // Where a person sees it (stdout may be a script's): the command that answers the prompt.
    void waiting_for_answer(const std::string& id) const {
        std::fprintf(
            stderr,
            "sluice: waiting for an answer: sluice approve %s %s (or sluice deny %s %s)\n",
            seat_.c_str(),
            id.c_str(),
            seat_.c_str(),
            id.c_str());
    }

    // The frame is the truth: print whatever the previews missed (dropped or superseded), so
    // the answer on the terminal is always complete.
    bool on_frame(const json::value& v, std::string_view epoch) {
        const auto row = shown(v, epoch);
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
            // A script answers with `sluice approve|deny SEAT REQUEST`: the id alone on stdout,
            // the command that answers it on stderr.
            std::printf("%s\n", id.c_str());
            std::fflush(stdout);
            waiting_for_answer(id);
            status = 3;
            return false;
        }
        printer_.line(
            "  (from elsewhere: sluice approve " + seat_ + " " + id + ", or sluice deny " + seat_
            + " " + id + ")");
        std::fprintf(stdout, "allow? [y/N] ");
        std::fflush(stdout);
        const auto yes = read_yes(id);
        printer_.at_line_start = true;
        if (!yes) {
            // Ctrl-C (the turn is being stopped), or answered elsewhere (its permission_resolved
            // frame follows and says by whom): nothing to answer here.
            std::fputc('\n', stdout);
            return true;
        }
        (void)cmd_answer(o_, seat_, id, *yes, *yes ? "" : "denied from the CLI");
        return true;
    }

    // The person's y/N to prompt `id` (a line on stdin; end of input is no), polled so that a
    // Ctrl-C, which stops the turn and withdraws the prompt, or an answer from another screen
    // (the page, `sluice approve`), ends the wait: nullopt then.
    std::optional<bool> read_yes(const std::string& id) {
        std::string got;
        for (int idle = 1;; ++idle) {
            if (interrupted.load()) {
                return std::nullopt;
            }
            if (idle % ANSWERED_CHECK_POLLS == 0 && !still_pending(id)) {
                return std::nullopt;
            }
            pollfd in{STDIN_FILENO, POLLIN, 0};
            const int n = ::poll(&in, 1, 100);
            if (n < 0 && errno != EINTR) {
                return false;
            }
            if (n <= 0) {
                continue;
            }
            char c = 0;
            if (::read(STDIN_FILENO, &c, 1) != 1) {
                return false; // end of input (or an error): no
            }
            if (c == '\n') {
                return !got.empty() && (got[0] == 'y' || got[0] == 'Y');
            }
            if (got.size() < 16) {
                got += c;
            }
        }
    }

    // Whether prompt `id` still waits on the hub (asked quietly: a hub out of reach for a
    // moment leaves the question up; the stream says when it is back).
    [[nodiscard]] bool still_pending(const std::string& id) const {
        const auto v = call(o_, "GET", "/v1/seats/" + seat_ + "/permissions", {}, true);
        if (!v || !v->is_object() || !v->as_object().contains("permissions")) {
            return true;
        }
        for (const auto& p : v->at("permissions").as_array()) {
            const auto* rid = p.is_object() ? p.as_object().if_contains("request_id") : nullptr;
            if (rid != nullptr && rid->is_string() && rid->as_string() == id) {
                return true;
            }
        }
        return false;
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
        } else {
            started_turn = std::max(started_turn.load(), t);
            if (t == my_turn.load() && interrupted.load() && stop_turn) {
                stop_turn(); // Ctrl-C while it was queued: stopped now it runs
            }
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
    bool rows_; // --json
    bool interactive_;
    TurnPrinter printer_;
    bool printed_text_{false};
    std::string streamed_; // preview text of the assistant message being written
    int connections_{0};   // streams opened
};

} // namespace

namespace {

// Ctrl-C during `send`, on a thread of its own (SIGINT is blocked in the others, so the hub's
// answer is awaited in peace): the first press asks the hub to stop the turn and lets `send`
// wait for its end; a second detaches at once, saying the turn goes on and how to stop it.
class InterruptWatch {
public:
    /// `on_first` runs on the watch's thread at the first Ctrl-C (it asks the hub to stop the
    /// turn, or leaves that to when the turn is known or starts).
    InterruptWatch(const std::string& seat, std::function<void()> on_first)
        : seat_(seat)
        , on_first_(std::move(on_first)) {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        ::pthread_sigmask(SIG_BLOCK, &set_, &old_); // inherited by the threads started after
        thread_ = std::thread([this] { run(); });
    }

    ~InterruptWatch() {
        done_ = true;
        thread_.join();
        ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }

    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

    /// Whether the person pressed Ctrl-C (the turn was asked to stop).
    [[nodiscard]] bool pressed() const noexcept { return pressed_; }

private:
    void run() {
        const timespec tick{0, 100'000'000}; // how soon the watch notices `send` is over
        while (!done_) {
            if (::sigtimedwait(&set_, nullptr, &tick) != SIGINT) {
                continue;
            }
            if (!pressed_.exchange(true)) {
                std::fprintf(stderr, "\nsluice: stopping the turn… (Ctrl-C again to detach)\n");
                on_first_();
                continue;
            }
            std::fprintf(
                stderr,
                "\nsluice: detached: the turn goes on on the hub; stop it with: sluice cancel "
                "%s\n",
                seat_.c_str());
            std::fflush(stdout);
            std::_Exit(130); // the reader may sit in a blocking read or at the y/N prompt
        }
    }

    const std::string& seat_;
    std::function<void()> on_first_;
    sigset_t set_{};
    sigset_t old_{};
    std::atomic<bool> done_{false};
    std::atomic<bool> pressed_{false};
    std::thread thread_;
};

} // namespace

int cmd_send(
    const ClientOptions& o,
    const std::string& seat,
    const std::string& text,
    bool show_thinking,
    bool full,
    bool rows) {
    SendWatch watch(o, seat, show_thinking, full, rows);
    // Ctrl-C stops our turn only: once it runs (a queued one when it starts, in on_turn), once.
    std::atomic<bool> stop_asked{false};
    watch.stop_turn = [&] {
        if (!stop_asked.exchange(true)) {
            (void)call(o, "POST", "/v1/seats/" + seat + "/cancel");
        }
    };
    const auto stop_if_running = [&watch] {
        const auto mine = watch.my_turn.load();
        if (mine != 0 && watch.started_turn.load() >= mine) {
            watch.stop_turn();
        }
    };
    InterruptWatch ctrl_c(seat, [&] {
        watch.interrupted = true;
        stop_if_running();
    });
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
    if (ctrl_c.pressed()) {
        stop = true;
        reader.join();
        std::fprintf(stderr, "sluice: nothing sent\n");
        return 130;
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
    if (ctrl_c.pressed()) {
        stop_if_running(); // pressed while the prompt was being sent
    }
    reader.join();
    return ctrl_c.pressed() ? 130 : watch.status.load();
}

} // namespace sluice::app::client
