// ProcessAgent: hosts an agent CLI speaking stream-json on stdio; pipes and exit on the executor.
#include "agents/control_requests.hpp"
#include "agents/line_parser.hpp"
#include "agents/turn_queue.hpp"
#include "process/child.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <deque>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::runtime {

namespace json = boost::json;
using detail::Child;
using detail::LineParser;
using detail::PendingTurn;
using detail::ProcId;

std::vector<std::string> ProcessAgentConfig::shell_argv(const std::string& command) {
    return {"/bin/sh", "-c", "exec " + command};
}

std::vector<std::string> ProcessAgentConfig::claude_argv() {
    return {
        "claude",
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages"};
}

std::vector<std::string> ProcessAgentConfig::claude_seat_argv(const std::string& bin) {
    auto argv = claude_argv();
    argv.front() = bin;
    argv.emplace_back("--permission-prompt-tool");
    argv.emplace_back("stdio");
    return argv;
}

namespace {

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

// Basis: enough of the agent's stderr to explain why it died, in one error line.
constexpr std::size_t STDERR_TAIL_BYTES = 2048;

// Basis: one pipe's default capacity on Linux; a read never holds more than this at once.
constexpr std::size_t READ_CHUNK_BYTES = 64 * 1024;

// One agent process and what belongs to it. Shared by its reader, stderr reader, exit watcher
// and writer coroutines; it ends when they all did (the process exited and was reaped).
struct Proc {
    Proc(std::unique_ptr<Child> c, ProcId n)
        : child(std::move(c))
        , id(n) {}

    std::unique_ptr<Child> child;
    ProcId id; // its name in ControlRequests
    stream_json::Decoder decoder;
    LineParser line;                // the stdout line being parsed (at most max_line_bytes)
    std::string err_tail;           // the last STDERR_TAIL_BYTES of its stderr
    std::deque<std::string> outbox; // rows for its stdin, written in order by one writer
    bool writing{false};
    bool out_done{false};      // its stdout reached EOF (or we stopped reading)
    std::optional<int> status; // its wait status once reaped
    bool gone{false};          // process_gone ran
};

/// How long a settings change waits for the agent's control_response. Basis: Claude Code
/// answers set_permission_mode / set_model at once (set_model after a probe request to the
/// API); 10 s covers a slow API, and a caller is told "no" rather than left waiting.
constexpr std::chrono::seconds SETTINGS_ANSWER_TIMEOUT{10};

// Everything a process agent owns, confined to its executor; shared so its coroutines may
// finish after the Agent object is gone.
class ProcessState : public std::enable_shared_from_this<ProcessState> {
public:
    ProcessState(const net::any_io_executor& ex, ProcessAgentConfig config)
        : ex_(ex)
        , config_(std::move(config))
        , queue_(ex)
        , interrupt_timer_(ex)
        , session_id_(config_.session_id) {}

    [[nodiscard]] const net::any_io_executor& executor() const noexcept { return ex_; }

    void submit(PendingTurn turn) {
        if (queue_.push(std::move(turn))) {
            pump();
        }
    }

    // An answer to a permission prompt of the running turn: the exact control_response. An
    // open prompt is always the running turn's process's (prompts end with the turn).
    void answer_permission(const PermissionAnswer& a) {
        if (auto out = control_.answer(a); out && turn_proc_ && turn_proc_->id == out->proc) {
            send(turn_proc_, std::move(out->line));
        }
    }

    [[nodiscard]] bool takes_settings() const noexcept { return config_.live_settings; }

    // Claude Code's set_permission_mode / set_model: the running process is asked, and `done`
    // gets its answer (control_response) once every field is answered; a field it took is kept
    // in the command line of every later process, a refused one is not. With no process
    // running, the command line alone changes.
    void apply_settings(const AgentSettings& a, Agent::SettingsDone done) {
        // An agent that never answers does not hold its caller: past the bound the change is
        // refused (the process may still take it; the next one starts with the old flags).
        auto timer = std::make_shared<net::steady_timer>(ex_, SETTINGS_ANSWER_TIMEOUT);
        const auto change =
            control_.open_change([timer, done = std::move(done)](Agent::SettingsAnswer answer) {
                timer->cancel();
                done(std::move(answer));
            });
        const bool live =
            config_.live_settings && child_ && !child_->gone && child_->child->in().is_open();
        const auto ask = [&](const char* flag,
                             const char* subtype,
                             const char* field,
                             const std::string& value) {
            std::string arg = AgentSettings::kept(value);
            if (!live) {
                detail::set_flag(config_.argv, flag, arg);
                return;
            }
            json::object req{{"subtype", subtype}};
            if (std::string_view(field) == "model" && arg.empty()) {
                req[field] = nullptr; // the session's default model
            } else {
                req[field] = value;
            }
            send(child_, control_.ask(change, child_->id, flag, std::move(arg), std::move(req)));
        };
        if (config_.live_settings && a.permission_mode) {
            ask("--permission-mode", "set_permission_mode", "mode", *a.permission_mode);
        }
        if (config_.live_settings && a.model) {
            ask("--model", "set_model", "model", *a.model);
        }
        if (control_.settle_if_done(change)) {
            return;
        }
        timer->async_wait([weak = weak_from_this(), change](boost::system::error_code ec) {
            auto self = weak.lock();
            if (ec || !self) {
                return; // answered in time (the change's end cancels it), or the agent is gone
            }
            self->control_.expire(
                change, "the agent did not answer within 10 s", self->config_.argv);
        });
    }

    // The Agent is gone: end every turn, terminate the process (asynchronously).
    void close() {
        queue_.close(); // first: ending the active turn must not start a queued one
        end_turn(detail::AGENT_CLOSED);
        if (child_) {
            terminate(child_);
        }
        control_.gone(std::nullopt, "the agent was closed before it answered", config_.argv);
    }

private:
    // ---- turns ----

    void pump() {
        while (!active_ && !queue_.closed()) {
            auto turn = queue_.pop();
            if (!turn) {
                return;
            }
            start(std::move(*turn));
        }
    }

    void start(PendingTurn turn) {
        active_ = std::move(turn);
        ++turn_seq_;
        cancelling_ = false;
        if (active_->cancel.is_cancelled()) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        if (!child_ && !spawn()) {
            return;
        }
        turn_proc_ = child_;
        child_->decoder.reset();
        send(child_, stream_json::encode_prompt(active_->prompt));
        // From any thread: the cancel is handled on the executor.
        active_cancel_ =
            active_->cancel.on_cancel([weak = weak_from_this(), ex = ex_, seq = turn_seq_] {
                net::post(ex, [weak, seq] {
                    if (auto self = weak.lock()) {
                        self->on_cancelled(seq);
                    }
                });
            });
    }

    void end_turn(TurnEnd end) {
        if (!active_) {
            return;
        }
        auto turn = std::move(*active_);
        active_.reset();
        turn_proc_.reset();
        control_.forget_prompts(); // the seat resolves what was still pending as withdrawn
        interrupt_timer_.cancel();
        // Destroyed on the executor: the callback only posts, so this never waits long.
        active_cancel_ = CancelRegistration{};
        turn.sink->on_end(std::move(end));
        pump();
    }

    void on_cancelled(std::uint64_t seq) {
        if (!active_ || seq != turn_seq_ || cancelling_) {
            return;
        }
        cancelling_ = true;
        auto proc = turn_proc_;
        if (!proc || proc->gone) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        if (config_.control_interrupt && proc->child->in().is_open()) {
            send(proc, stream_json::encode_interrupt(control_.next_id("interrupt")));
            interrupt_timer_.expires_after(config_.interrupt_grace);
            interrupt_timer_.async_wait([weak = weak_from_this(),
                                         seq](boost::system::error_code ec) {
                auto self = weak.lock();
                if (ec || !self || !self->active_ || self->turn_seq_ != seq || !self->turn_proc_) {
                    return;
                }
                self->terminate(self->turn_proc_); // no result within the grace
            });
            return;
        }
        terminate(proc);
    }

    // ---- the process ----

    bool spawn() {
        std::string error;
        auto argv = config_.argv;
        if (config_.resume_sessions && !session_id_.empty()) {
            argv.emplace_back("--resume");
            argv.push_back(session_id_);
        }
        auto child = Child::spawn(
            ex_,
            {.argv = std::move(argv),
             .cwd = config_.working_dir,
             .stdin_pipe = true,
             .separate_stderr = true,
             .env = config_.env},
            error);
        if (!child) {
            end_turn({TurnEnd::State::failed, "cannot start the agent: " + error});
            return false;
        }
        auto proc = std::make_shared<Proc>(std::move(child), ++proc_seq_);
        child_ = proc;
        auto self = shared_from_this();
        net::co_spawn(ex_, read_stdout(self, proc), [](const std::exception_ptr& e) {
            detail::log_escaped(e, "process stdout");
        });
        net::co_spawn(ex_, read_stderr(proc), [](const std::exception_ptr& e) {
            detail::log_escaped(e, "process stderr");
        });
        net::co_spawn(ex_, watch_exit(self, proc), [](const std::exception_ptr& e) {
            detail::log_escaped(e, "process exit");
        });
        return true;
    }

    // Ends the process: stdin closed, SIGTERM to its group, SIGKILL after terminate_grace. The
    // next turn starts a new process.
    // NOLINTNEXTLINE(performance-unnecessary-value-param): by value, it may reset child_
    void terminate(std::shared_ptr<Proc> proc) {
        if (child_ == proc) {
            child_.reset();
        }
        if (proc->gone) {
            return;
        }
        boost::system::error_code ignored;
        proc->child->in().close(ignored);
        proc->outbox.clear();
        proc->child->terminate(config_.terminate_grace);
    }

    void send(const std::shared_ptr<Proc>& proc, std::string line) {
        if (!proc->child->in().is_open()) {
            return;
        }
        proc->outbox.push_back(std::move(line));
        if (proc->writing) {
            return;
        }
        proc->writing = true;
        net::co_spawn(ex_, write_stdin(proc), [](const std::exception_ptr& e) {
            detail::log_escaped(e, "process stdin");
        });
    }

    static net::awaitable<void> write_stdin(std::shared_ptr<Proc> proc) {
        while (!proc->outbox.empty()) {
            const auto ec = co_await proc->child->write_stdin(proc->outbox.front());
            if (ec) {
                // The agent closed stdin or died: stop writing; its exit ends the turn.
                boost::system::error_code ignored;
                proc->child->in().close(ignored);
                proc->outbox.clear();
                break;
            }
            proc->outbox.pop_front();
        }
        proc->writing = false;
    }

    static net::awaitable<void> read_stderr(std::shared_ptr<Proc> proc) {
        std::array<char, 4096> buf{};
        while (true) {
            auto [ec, n] = co_await proc->child->err().async_read_some(net::buffer(buf), TUPLE);
            if (n > 0) {
                keep_tail(*proc, std::string_view(buf.data(), n));
            }
            if (ec) {
                co_return;
            }
        }
    }

    static void keep_tail(Proc& proc, std::string_view data) {
        proc.err_tail.append(data);
        if (proc.err_tail.size() > STDERR_TAIL_BYTES) {
            proc.err_tail.erase(0, proc.err_tail.size() - STDERR_TAIL_BYTES);
        }
    }

    static net::awaitable<void>
    read_stdout(std::shared_ptr<ProcessState> self, std::shared_ptr<Proc> proc) {
        std::vector<char> buf(READ_CHUNK_BYTES);
        while (!proc->out_done) {
            auto [ec, n] = co_await proc->child->out().async_read_some(net::buffer(buf), TUPLE);
            std::string_view data(buf.data(), n);
            while (!data.empty() && !proc->out_done) {
                const auto nl = data.find('\n');
                const auto piece = data.substr(0, nl);
                if (proc->line.size() + piece.size() > self->config_.max_line_bytes) {
                    self->line_too_long(proc);
                    break;
                }
                proc->line.feed(piece);
                if (nl == std::string_view::npos) {
                    break;
                }
                data.remove_prefix(nl + 1);
                self->handle_line(proc, proc->line.take());
            }
            if (ec && !proc->out_done) {
                // Its output ended: it should be exiting. Give it the terminate grace, then kill.
                proc->out_done = true;
                boost::system::error_code ignored;
                proc->child->in().close(ignored);
                proc->child->kill_after(self->config_.terminate_grace);
            }
        }
        self->maybe_gone(proc);
    }

    static net::awaitable<void>
    watch_exit(std::shared_ptr<ProcessState> self, std::shared_ptr<Proc> proc) {
        // Stragglers of its group are killed so its stdout reaches EOF.
        proc->status = co_await proc->child->wait_exit(/*kill_stragglers=*/true);
        self->maybe_gone(proc);
    }

    void line_too_long(const std::shared_ptr<Proc>& proc) {
        proc->out_done = true;
        proc->line.clear();
        proc->child->signal_group(SIGKILL);
        if (child_ == proc) {
            child_.reset();
        }
        if (turn_proc_ == proc) {
            end_turn(
                {TurnEnd::State::failed,
                 "the agent wrote a line longer than " + std::to_string(config_.max_line_bytes)
                     + " bytes"});
        }
    }

    void handle_line(const std::shared_ptr<Proc>& proc, json::value line) {
        auto decoded = proc->decoder.decode_value(std::move(line));
        const bool ours = active_ && turn_proc_ == proc;
        if (auto* req = std::get_if<stream_json::ControlRequest>(&decoded)) {
            control_request(proc, *req, ours);
            return;
        }
        if (auto* answer = std::get_if<stream_json::ControlResponse>(&decoded)) {
            control_.answered(
                answer->request_id, std::move(answer->error), config_.argv, answer->response);
            return; // answers to interrupts and settings, whenever they come
        }
        if (!ours) {
            return; // output between turns (or of a process being replaced) belongs to no turn
        }
        if (auto* c = std::get_if<stream_json::ControlCancel>(&decoded)) {
            if (auto withdrawn = control_.withdraw(c->request_id)) {
                active_->sink->on_event(std::move(*withdrawn));
            }
        } else if (auto* p = std::get_if<stream_json::Preview>(&decoded)) {
            if (config_.relay_stream_rows) {
                active_->sink->on_stream_row(std::move(p->row));
            }
            active_->sink->on_preview(std::move(p->event));
        } else if (auto* sr = std::get_if<stream_json::StreamRow>(&decoded)) {
            if (config_.relay_stream_rows) {
                active_->sink->on_stream_row(std::move(sr->row));
            }
        } else if (auto* f = std::get_if<stream_json::Frame>(&decoded)) {
            auto event = stream_json::frame_event(f->row);
            if (!event) {
                active_->sink->on_row(std::move(f->row));
                return;
            }
            if (const auto* started = std::get_if<SessionStarted>(&*event)) {
                session_id_ = started->session_id; // a later process resumes this session
            } else if (std::holds_alternative<ConversationReset>(*event)) {
                // `/clear`: the old session is over; the new one's init follows.
                session_id_.clear();
            }
            active_->sink->on_event(std::move(*event));
        } else if (auto* r = std::get_if<stream_json::TurnResult>(&decoded)) {
            active_->sink->on_row(std::move(r->row));
            end_turn(cancelling_ ? TurnEnd{TurnEnd::State::cancelled, "cancelled"} : TurnEnd{});
        }
    }

    // A control request of the agent. A permission prompt of the running turn waits for an
    // answer (host_permissions); everything else is answered at once, as the protocol wants,
    // so no dialog is left pending.
    void control_request(
        const std::shared_ptr<Proc>& proc, const stream_json::ControlRequest& req, bool ours) {
        auto taken = control_.on_request(proc->id, req, config_.host_permissions && ours);
        if (taken.prompt) {
            active_->sink->on_event(std::move(*taken.prompt));
        } else {
            send(proc, std::move(taken.reply));
        }
    }

    void maybe_gone(const std::shared_ptr<Proc>& proc) {
        if (!proc->out_done || !proc->status || proc->gone) {
            return;
        }
        proc->gone = true;
        // What is left of its stderr (the reader may not have had its turn yet): non-blocking.
        if (proc->child->err().is_open()) {
            std::array<char, 4096> buf{};
            while (true) {
                const auto n = ::read(proc->child->err().native_handle(), buf.data(), buf.size());
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    break;
                }
                keep_tail(*proc, std::string_view(buf.data(), static_cast<std::size_t>(n)));
            }
        }
        boost::system::error_code ignored;
        proc->child->in().close(ignored);
        proc->child->err().close(ignored);
        proc->outbox.clear();
        if (child_ == proc) {
            child_.reset();
        }
        control_.gone(proc->id, "the agent exited before it answered", config_.argv);
        if (!active_ || turn_proc_ != proc) {
            return;
        }
        if (cancelling_) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        std::string msg = "the agent exited (" + Child::describe_status(*proc->status) + ")";
        auto tail = proc->err_tail;
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

    net::any_io_executor ex_;
    ProcessAgentConfig config_;
    detail::TurnQueue queue_;
    std::shared_ptr<Proc> child_; // the process the next turn uses (null: start one)
    std::optional<PendingTurn> active_;
    std::shared_ptr<Proc> turn_proc_; // the process the active turn runs on
    CancelRegistration active_cancel_;
    std::uint64_t turn_seq_{};
    bool cancelling_{false};
    net::steady_timer interrupt_timer_;
    std::string session_id_;          // resume_sessions: the session a new process resumes
    detail::ControlRequests control_; // open prompts and settings requests, both ways
    ProcId proc_seq_{};               // the last process's id
};

} // namespace

std::unique_ptr<Agent>
make_process_agent(const net::any_io_executor& ex, ProcessAgentConfig config) {
    return std::make_unique<detail::PostingAgent<ProcessState>>(
        std::make_shared<ProcessState>(ex, std::move(config)), "process");
}

} // namespace sluice::runtime
