// ProcessAgent: hosts an agent CLI speaking stream-json on stdio; one I/O thread per agent.
#include "child_process.hpp"

#include <sluice/runtime/agent.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace sluice::runtime {

namespace json = boost::json;
using detail::ChildProcess;

std::vector<std::string> ProcessAgentConfig::shell_argv(const std::string& command) {
    return {"/bin/sh", "-c", "exec " + command};
}

std::vector<std::string> ProcessAgentConfig::claude_argv() {
    return {"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
            "--verbose", "--include-partial-messages"};
}

namespace {

using clock = std::chrono::steady_clock;

// Basis: enough of the agent's stderr to explain why it died, in one error line.
constexpr std::size_t STDERR_TAIL_BYTES = 2048;

struct PendingTurn {
    std::string prompt;
    CancellationToken cancel;
    std::shared_ptr<TurnSink> sink;
    CancelRegistration wake; // wakes the I/O thread when cancelled
};

std::string_view str_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

// A user row that carries a prompt (an echo of ours), not tool results.
bool is_prompt_row(const json::object& row) {
    const auto* mv = row.if_contains("message");
    const auto* m = mv == nullptr ? nullptr : mv->if_object();
    const auto* c = m == nullptr ? nullptr : m->if_contains("content");
    if (c == nullptr || c->is_string()) {
        return true;
    }
    if (!c->is_array()) {
        return true;
    }
    return std::none_of(c->get_array().begin(), c->get_array().end(), [](const json::value& b) {
        const auto* bo = b.if_object();
        return bo != nullptr && str_field(*bo, "type") == "tool_result";
    });
}

class ProcessAgent final : public Agent {
public:
    explicit ProcessAgent(ProcessAgentConfig config) : config_(std::move(config)) {
        thread_ = std::thread([this] { io_loop(); });
    }

    ~ProcessAgent() override {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
        }
        wake_.notify();
        thread_.join();
    }

    ProcessAgent(const ProcessAgent&) = delete;
    ProcessAgent& operator=(const ProcessAgent&) = delete;
    ProcessAgent(ProcessAgent&&) = delete;
    ProcessAgent& operator=(ProcessAgent&&) = delete;

    void start_turn(std::string prompt, CancellationToken cancel, std::shared_ptr<TurnSink> sink) override {
        PendingTurn t{std::move(prompt), cancel, std::move(sink), {}};
        t.wake = cancel.on_cancel([this] { wake_.notify(); });
        {
            std::lock_guard lock(mu_);
            queue_.push_back(std::move(t));
        }
        wake_.notify();
    }

    std::string kind() const override { return "process"; }

private:
    // ---- everything below runs on the I/O thread ----

    void io_loop() {
        // Writes to a dead agent's stdin must fail with EPIPE, not kill the host.
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
        while (true) {
            {
                std::lock_guard lock(mu_);
                if (stopping_) {
                    break;
                }
            }
            end_cancelled_queued();
            if (!active_) {
                start_next_turn();
            }
            poll_once();
        }
        shutdown();
    }

    void end_cancelled_queued() {
        std::vector<PendingTurn> cancelled;
        {
            std::lock_guard lock(mu_);
            for (auto it = queue_.begin(); it != queue_.end();) {
                if (it->cancel.is_cancelled()) {
                    cancelled.push_back(std::move(*it));
                    it = queue_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        for (auto& t : cancelled) {
            t.sink->on_end({TurnEnd::State::cancelled, "cancelled"});
        }
    }

    void start_next_turn() {
        {
            std::lock_guard lock(mu_);
            if (queue_.empty()) {
                return;
            }
            active_ = std::move(queue_.front());
            queue_.pop_front();
        }
        cancelling_ = false;
        interrupt_deadline_.reset();
        term_deadline_.reset();
        tool_ids_.clear();
        if (!child_) {
            std::string error;
            child_ = ChildProcess::spawn(
                {.argv = config_.argv, .cwd = config_.working_dir, .stdin_pipe = true, .separate_stderr = true},
                error);
            if (!child_) {
                end_turn({TurnEnd::State::failed, "cannot start the agent: " + error});
                return;
            }
            line_.clear();
            err_tail_.clear();
        }
        json::object row{
            {"type", "user"},
            {"message", json::object{{"role", "user"}, {"content", active_->prompt}}},
            {"parent_tool_use_id", nullptr}};
        stdin_buf_ += json::serialize(row);
        stdin_buf_ += '\n';
    }

    void end_turn(TurnEnd end) {
        if (!active_) {
            return;
        }
        auto turn = std::move(*active_);
        active_.reset();
        turn.wake = CancelRegistration{};
        turn.sink->on_end(std::move(end));
    }

    void poll_once() {
        pollfd fds[4];
        nfds_t n = 0;
        fds[n++] = {wake_.fd(), POLLIN, 0};
        const int out_i = child_ && child_->stdout_fd() >= 0 ? static_cast<int>(n++) : -1;
        if (out_i >= 0) {
            fds[out_i] = {child_->stdout_fd(), POLLIN, 0};
        }
        const int err_i = child_ && child_->stderr_fd() >= 0 ? static_cast<int>(n++) : -1;
        if (err_i >= 0) {
            fds[err_i] = {child_->stderr_fd(), POLLIN, 0};
        }
        const int in_i = child_ && child_->stdin_fd() >= 0 && !stdin_buf_.empty() ? static_cast<int>(n++) : -1;
        if (in_i >= 0) {
            fds[in_i] = {child_->stdin_fd(), POLLOUT, 0};
        }
        int timeout_ms = -1;
        const auto now = clock::now();
        for (const auto& d : {interrupt_deadline_, term_deadline_}) {
            if (d) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*d - now).count() + 1;
                timeout_ms = timeout_ms < 0 ? static_cast<int>(std::max<std::int64_t>(0, left))
                                            : std::min(timeout_ms, static_cast<int>(std::max<std::int64_t>(0, left)));
            }
        }
        if (child_ && out_i < 0) {
            timeout_ms = timeout_ms < 0 ? 20 : std::min(timeout_ms, 20); // waiting for its exit
        }
        const int r = ::poll(fds, n, timeout_ms);
        if (r < 0 && errno != EINTR) {
            return;
        }
        if ((fds[0].revents & POLLIN) != 0) {
            wake_.drain();
        }
        if (active_ && active_->cancel.is_cancelled() && !cancelling_) {
            begin_cancel();
        }
        if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
            write_stdin();
        }
        if (err_i >= 0 && child_ && (fds[err_i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            read_stderr();
        }
        if (out_i >= 0 && child_ && (fds[out_i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            read_stdout();
        }
        check_deadlines();
        if (child_ && child_->stdout_fd() < 0) {
            reap_if_exited();
        }
    }

    void begin_cancel() {
        cancelling_ = true;
        if (config_.control_interrupt && child_ && child_->stdin_fd() >= 0) {
            json::object req{
                {"type", "control_request"},
                {"request_id", "sluice-interrupt-" + std::to_string(++request_seq_)},
                {"request", json::object{{"subtype", "interrupt"}}}};
            stdin_buf_ += json::serialize(req);
            stdin_buf_ += '\n';
            interrupt_deadline_ = clock::now() + config_.interrupt_grace;
        } else {
            terminate();
        }
    }

    void terminate() {
        interrupt_deadline_.reset();
        if (!child_) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        child_->close_stdin();
        child_->kill_group(SIGTERM);
        term_deadline_ = clock::now() + config_.terminate_grace;
    }

    void check_deadlines() {
        const auto now = clock::now();
        if (interrupt_deadline_ && now >= *interrupt_deadline_) {
            terminate();
        }
        if (term_deadline_ && now >= *term_deadline_) {
            term_deadline_.reset();
            if (child_) {
                child_->kill_group(SIGKILL);
                child_->wait();
                process_gone(); // the turn ends there
            }
        }
    }

    void write_stdin() {
        while (!stdin_buf_.empty() && child_ && child_->stdin_fd() >= 0) {
            const auto w = ::write(child_->stdin_fd(), stdin_buf_.data(), stdin_buf_.size());
            if (w > 0) {
                stdin_buf_.erase(0, static_cast<std::size_t>(w));
                continue;
            }
            if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
                return;
            }
            // EPIPE (the agent closed stdin or died): clear the pending signal, stop writing.
            sigset_t pipe_set;
            sigemptyset(&pipe_set);
            sigaddset(&pipe_set, SIGPIPE);
            timespec zero{};
            sigtimedwait(&pipe_set, nullptr, &zero);
            child_->close_stdin();
            stdin_buf_.clear();
        }
    }

    void read_stderr() {
        char buf[4096];
        const auto n = ::read(child_->stderr_fd(), buf, sizeof buf);
        if (n > 0) {
            err_tail_.append(buf, static_cast<std::size_t>(n));
            if (err_tail_.size() > STDERR_TAIL_BYTES) {
                err_tail_.erase(0, err_tail_.size() - STDERR_TAIL_BYTES);
            }
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            child_->close_stderr();
        }
    }

    void read_stdout() {
        char buf[65536];
        const auto n = ::read(child_->stdout_fd(), buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        if (n <= 0) {
            // Its output ended: it should be exiting. Give it the terminate grace, then kill.
            child_->close_stdout();
            child_->close_stdin();
            if (!term_deadline_) {
                term_deadline_ = clock::now() + config_.terminate_grace;
            }
            return;
        }
        std::string_view data(buf, static_cast<std::size_t>(n));
        while (!data.empty() && child_) {
            const auto nl = data.find('\n');
            const auto piece = data.substr(0, nl);
            if (line_.size() + piece.size() > config_.max_line_bytes) {
                line_.clear();
                const auto limit = config_.max_line_bytes;
                kill_process();
                end_turn({TurnEnd::State::failed,
                          "the agent wrote a line longer than " + std::to_string(limit) + " bytes"});
                return;
            }
            line_.append(piece);
            if (nl == std::string_view::npos) {
                return;
            }
            data.remove_prefix(nl + 1);
            std::string line = std::move(line_);
            line_.clear();
            handle_line(line);
        }
    }

    void handle_line(std::string_view line) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.remove_suffix(1);
        }
        if (line.empty()) {
            return;
        }
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        if (ec || !v.is_object()) {
            return; // not a row (a stray log line): not a frame
        }
        auto& row = v.as_object();
        const auto type = str_field(row, "type");
        if (type == "control_request") {
            // sluice does not answer permission prompts or hooks: refuse so the agent goes on.
            json::object resp{
                {"type", "control_response"},
                {"response", json::object{
                    {"subtype", "error"},
                    {"request_id", str_field(row, "request_id")},
                    {"error", "sluice does not handle control requests"}}}};
            stdin_buf_ += json::serialize(resp);
            stdin_buf_ += '\n';
            return;
        }
        if (type == "control_response" || type == "control_cancel_request" || type == "keep_alive") {
            return;
        }
        if (!active_) {
            return; // output between turns belongs to no turn
        }
        if (type == "stream_event") {
            preview(row);
            return;
        }
        if (type == "user" && is_prompt_row(row)) {
            return; // the echo of our prompt: the caller records the prompt itself
        }
        const bool is_result = type == "result";
        active_->sink->on_row(std::move(row));
        if (is_result) {
            end_turn(cancelling_ ? TurnEnd{TurnEnd::State::cancelled, "cancelled"} : TurnEnd{});
            interrupt_deadline_.reset();
        }
    }

    void preview(const json::object& row) {
        if (const auto* p = row.if_contains("parent_tool_use_id"); p != nullptr && !p->is_null()) {
            return; // a sub-agent's partials: not this turn's preview
        }
        const auto* ev = row.if_contains("event");
        const auto* e = ev == nullptr ? nullptr : ev->if_object();
        if (e == nullptr) {
            return;
        }
        const auto etype = str_field(*e, "type");
        std::int64_t index = -1;
        if (const auto* i = e->if_contains("index"); i != nullptr && i->is_int64()) {
            index = i->get_int64();
        }
        if (etype == "message_start") {
            tool_ids_.clear();
            return;
        }
        if (etype == "content_block_start") {
            const auto* cb = e->if_contains("content_block");
            const auto* c = cb == nullptr ? nullptr : cb->if_object();
            if (c != nullptr && str_field(*c, "type") == "tool_use") {
                tool_ids_[index] = std::string(str_field(*c, "id"));
            }
            return;
        }
        if (etype != "content_block_delta") {
            return;
        }
        const auto* dv = e->if_contains("delta");
        const auto* d = dv == nullptr ? nullptr : dv->if_object();
        if (d == nullptr) {
            return;
        }
        const auto dtype = str_field(*d, "type");
        if (dtype == "text_delta") {
            active_->sink->on_preview(llm::Text{std::string(str_field(*d, "text"))});
        } else if (dtype == "thinking_delta") {
            active_->sink->on_preview(llm::Thinking{std::string(str_field(*d, "thinking"))});
        } else if (dtype == "input_json_delta") {
            auto it = tool_ids_.find(index);
            active_->sink->on_preview(llm::ToolUseDelta{
                it == tool_ids_.end() ? std::string{} : it->second, std::string(str_field(*d, "partial_json"))});
        }
    }

    void kill_process() {
        if (child_) {
            child_->kill_group(SIGKILL);
            child_->wait();
            child_.reset();
        }
        stdin_buf_.clear();
        line_.clear();
        interrupt_deadline_.reset();
        term_deadline_.reset();
    }

    void reap_if_exited() {
        auto st = child_->try_wait();
        if (!st) {
            return;
        }
        process_gone();
    }

    // The process ended (or was killed): the running turn ends with it.
    void process_gone() {
        const int status = child_->wait();
        while (child_->stderr_fd() >= 0) {
            char buf[4096];
            const auto n = ::read(child_->stderr_fd(), buf, sizeof buf);
            if (n <= 0) {
                break;
            }
            err_tail_.append(buf, static_cast<std::size_t>(n));
        }
        child_->kill_group(SIGKILL); // stragglers of its group
        child_.reset();
        stdin_buf_.clear();
        line_.clear();
        interrupt_deadline_.reset();
        term_deadline_.reset();
        if (!active_) {
            return;
        }
        if (cancelling_) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        std::string msg = "the agent exited (" + ChildProcess::describe_status(status) + ")";
        auto tail = err_tail_;
        if (tail.size() > STDERR_TAIL_BYTES) {
            tail.erase(0, tail.size() - STDERR_TAIL_BYTES);
        }
        while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) {
            tail.pop_back();
        }
        if (const auto nl = tail.rfind('\n'); nl != std::string::npos) {
            tail.erase(0, nl + 1);
        }
        if (!tail.empty()) {
            msg += ": " + tail;
        }
        end_turn({TurnEnd::State::failed, std::move(msg)});
    }

    void shutdown() {
        if (child_) {
            child_->close_stdin();
            child_->kill_group(SIGTERM);
            const auto deadline = clock::now() + config_.terminate_grace;
            while (!child_->try_wait() && clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            child_.reset(); // SIGKILLs the group if still running, and reaps
        }
        end_turn({TurnEnd::State::cancelled, "the agent was closed"});
        std::deque<PendingTurn> rest;
        {
            std::lock_guard lock(mu_);
            rest.swap(queue_);
        }
        for (auto& t : rest) {
            t.sink->on_end({TurnEnd::State::cancelled, "the agent was closed"});
        }
    }

    ProcessAgentConfig config_;
    detail::WakeFd wake_;
    std::mutex mu_;
    std::deque<PendingTurn> queue_; // guarded by mu_
    bool stopping_{false};          // guarded by mu_
    // I/O thread only:
    std::unique_ptr<ChildProcess> child_;
    std::optional<PendingTurn> active_;
    bool cancelling_{false};
    std::optional<clock::time_point> interrupt_deadline_;
    std::optional<clock::time_point> term_deadline_;
    std::string stdin_buf_;
    std::string line_;
    std::string err_tail_;
    std::map<std::int64_t, std::string> tool_ids_;
    std::uint64_t request_seq_{};
    std::thread thread_; // last: starts after every member above exists
};

} // namespace

std::unique_ptr<Agent> make_process_agent(ProcessAgentConfig config) {
    return std::make_unique<ProcessAgent>(std::move(config));
}

} // namespace sluice::runtime
