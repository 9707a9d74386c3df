// ProcessAgent: hosts an agent CLI speaking stream-json on stdio; pipes and exit on the executor.
#include "agents/turn_queue.hpp"
#include "process/child.hpp"

#include <sluice/runtime/agent.hpp>
#include <sluice/runtime/stream_json.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <deque>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::runtime {

namespace json = boost::json;
namespace net = boost::asio;
using detail::Child;
using detail::PendingTurn;

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

// A stdout line parsed as its pieces arrive, never assembled: an agent's 12 MB row costs its
// parse (the parser's string buffer, then the value) and not a copy of the line as well
// (issue 11: the hub's peak while it takes an oversize frame).
class LineParser {
public:
    /// Takes the next piece of the line (without its '\n').
    void feed(std::string_view piece) {
        bytes_ += piece.size();
        if (bad_ || piece.empty()) {
            return;
        }
        boost::system::error_code ec;
        parser_->write(piece.data(), piece.size(), ec);
        bad_ = static_cast<bool>(ec); // not JSON (a stray log line): the rest is only counted
    }

    /// The bytes of the line so far.
    [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

    /// The whole line's value (null: empty or not JSON); the parser is ready for the next line.
    boost::json::value take() {
        boost::json::value v;
        if (!bad_ && bytes_ > 0) {
            boost::system::error_code ec;
            parser_->finish(ec);
            if (!ec) {
                v = parser_->release();
            }
        }
        clear();
        return v;
    }

    /// Drops the line; a parser that grew for a large line is let go with it.
    void clear() {
        if (bytes_ > LARGE_LINE_BYTES) {
            parser_.emplace();
        } else {
            parser_->reset();
        }
        bytes_ = 0;
        bad_ = false;
    }

private:
    // Past this a line's parser is rebuilt, not reset: its buffers keep their size otherwise.
    static constexpr std::size_t LARGE_LINE_BYTES = 256 * 1024;

    std::optional<boost::json::stream_parser> parser_{std::in_place};
    std::size_t bytes_{0};
    bool bad_{false};
};

// One agent process and what belongs to it. Shared by its reader, stderr reader, exit watcher
// and writer coroutines; it ends when they all did (the process exited and was reaped).
struct Proc {
    explicit Proc(std::unique_ptr<Child> c)
        : child(std::move(c)) {}

    std::unique_ptr<Child> child;
    stream_json::Decoder decoder;
    LineParser line;                // the stdout line being parsed (at most max_line_bytes)
    std::string err_tail;           // the last STDERR_TAIL_BYTES of its stderr
    std::deque<std::string> outbox; // rows for its stdin, written in order by one writer
    bool writing{false};
    bool out_done{false};      // its stdout reached EOF (or we stopped reading)
    std::optional<int> status; // its wait status once reaped
    bool gone{false};          // process_gone ran
};

// Everything a process agent owns, confined to its executor; shared so its coroutines may
// finish after the Agent object is gone.
// Sets `flag value` in `argv` (replacing the flag's value, else appending both); an empty
// value removes the flag.
void set_flag(std::vector<std::string>& argv, std::string_view flag, const std::string& value) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    if (it != argv.end()) {
        const auto value_end = std::next(it) == argv.end() ? std::next(it) : std::next(it, 2);
        it = argv.erase(it, value_end);
    }
    if (!value.empty()) {
        it = argv.insert(it, std::string(flag));
        argv.insert(std::next(it), value);
    }
}

/// How long a settings change waits for the agent's control_response. Basis: Claude Code
/// answers set_permission_mode / set_model at once (set_model after a probe request to the
/// API); 10 s covers a slow API, and a caller is told "no" rather than left waiting.
constexpr std::chrono::seconds SETTINGS_ANSWER_TIMEOUT{10};

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

    // An answer to a permission prompt of the running turn: the exact control_response.
    void answer_permission(PermissionAnswer a) {
        auto it = permissions_.find(a.request_id);
        if (it == permissions_.end()) {
            return; // withdrawn, or its turn ended: nobody waits for it
        }
        auto [proc, input] = std::move(it->second);
        permissions_.erase(it);
        const auto* updated = a.updated_input ? &*a.updated_input : nullptr;
        send(
            proc,
            stream_json::encode_control_success(
                a.request_id,
                stream_json::permission_response(a.allow, a.message, updated, &input)));
    }

    [[nodiscard]] bool takes_settings() const noexcept { return config_.live_settings; }

    // Claude Code's set_permission_mode / set_model: the running process is asked, and `done`
    // gets its answer (control_response) once every field is answered; a field it took is kept
    // in the command line of every later process, a refused one is not. With no process
    // running, the command line alone changes.
    void apply_settings(const AgentSettings& a, Agent::SettingsDone done) {
        auto wait = std::make_shared<SettingsWait>();
        wait->done = std::move(done);
        if (!config_.live_settings) {
            settle(*wait);
            return;
        }
        const bool live = child_ && !child_->gone && child_->child->in().is_open();
        const auto ask = [&](const char* flag,
                             const char* subtype,
                             const char* field,
                             const std::string& value) {
            std::string arg = value == "default" ? std::string() : value;
            if (!live) {
                set_flag(config_.argv, flag, arg);
                return;
            }
            json::object req{{"subtype", subtype}};
            if (std::string_view(field) == "model" && arg.empty()) {
                req[field] = nullptr; // the session's default model
            } else {
                req[field] = value;
            }
            auto id = "sluice-settings-" + std::to_string(++request_seq_);
            settings_pending_[id] = PendingSettings{child_, flag, std::move(arg), wait};
            ++wait->left;
            send(child_, stream_json::encode_control_request(id, std::move(req)));
        };
        if (a.permission_mode) {
            ask("--permission-mode", "set_permission_mode", "mode", *a.permission_mode);
        }
        if (a.model) {
            ask("--model", "set_model", "model", *a.model);
        }
        if (wait->left == 0) {
            settle(*wait);
            return;
        }
        // An agent that never answers does not hold its caller: past the bound the change is
        // refused (the process may still take it; the next one starts with the old flags).
        wait->timer = std::make_shared<net::steady_timer>(ex_, SETTINGS_ANSWER_TIMEOUT);
        wait->timer->async_wait([weak = weak_from_this(), wait](boost::system::error_code ec) {
            auto self = weak.lock();
            if (ec || !self) {
                return; // answered in time (settle cancels it), or the agent is gone
            }
            std::vector<std::string> ids;
            for (const auto& [id, p] : self->settings_pending_) {
                if (p.wait == wait) {
                    ids.push_back(id);
                }
            }
            for (const auto& id : ids) {
                self->settings_answered(id, "the agent did not answer within 10 s");
            }
        });
    }

    // The Agent is gone: end every turn, terminate the process (asynchronously).
    void close() {
        queue_.close(); // first: ending the active turn must not start a queued one
        end_turn(detail::AGENT_CLOSED);
        if (child_) {
            terminate(child_);
        }
        settings_gone(nullptr, "the agent was closed before it answered");
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
        permissions_.clear(); // the seat resolves what was still pending as withdrawn
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
            send(
                proc,
                stream_json::encode_interrupt(
                    "sluice-interrupt-" + std::to_string(++request_seq_)));
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
        auto proc = std::make_shared<Proc>(std::move(child));
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
            settings_answered(answer->request_id, std::move(answer->error));
            return; // answers to interrupts and settings, whenever they come
        }
        if (!ours) {
            return; // output between turns (or of a process being replaced) belongs to no turn
        }
        if (auto* c = std::get_if<stream_json::ControlCancel>(&decoded)) {
            if (permissions_.erase(c->request_id) > 0) {
                active_->sink->on_row(
                    stream_json::permission_resolved_row(c->request_id, "withdrawn", "agent"));
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
            if (const auto sid = stream_json::init_session_id(f->row); !sid.empty()) {
                session_id_ = std::string(sid); // a later process resumes this session
            } else if (str_field(f->row, "type") == "conversation_reset") {
                session_id_
                    .clear(); // `/clear`: the old session is over; the new one's init follows
            }
            active_->sink->on_row(std::move(f->row));
        } else if (auto* r = std::get_if<stream_json::TurnResult>(&decoded)) {
            active_->sink->on_row(std::move(r->row));
            end_turn(cancelling_ ? TurnEnd{TurnEnd::State::cancelled, "cancelled"} : TurnEnd{});
        }
    }

    // A control request of the agent. A permission prompt of the running turn waits for an
    // answer (host_permissions); everything else is answered at once, as the protocol wants,
    // so no dialog is left pending: hooks continue, an MCP message gets a JSON-RPC error (no
    // SDK servers here), an elicitation is declined, anything unknown is refused.
    void control_request(
        const std::shared_ptr<Proc>& proc, const stream_json::ControlRequest& req, bool ours) {
        const auto* r = req.row.if_contains("request");
        static const json::object none;
        const json::object& q = r != nullptr && r->is_object() ? r->get_object() : none;
        const auto subtype = str_field(q, "subtype");
        if (subtype == "can_use_tool" && config_.host_permissions && ours) {
            const auto* input = q.if_contains("input");
            permissions_[req.request_id] =
                PendingPermission{proc, input == nullptr ? json::value(json::object{}) : *input};
            active_->sink->on_row(stream_json::permission_request_row(req.row));
            return;
        }
        if (subtype == "can_use_tool") {
            send(
                proc,
                stream_json::encode_control_success(
                    req.request_id,
                    stream_json::permission_response(
                        false, "no one can answer permission prompts here", nullptr, nullptr)));
        } else if (subtype == "hook_callback") {
            send(proc, stream_json::encode_control_success(req.request_id, json::object{}));
        } else if (subtype == "mcp_message") {
            json::object rpc{{"jsonrpc", "2.0"}};
            const auto* m = q.if_contains("message");
            if (m != nullptr && m->is_object()) {
                if (const auto* id = m->get_object().if_contains("id")) {
                    rpc["id"] = *id;
                }
            }
            rpc["error"] =
                json::object{{"code", -32601}, {"message", "no such MCP server in sluice"}};
            send(
                proc,
                stream_json::encode_control_success(
                    req.request_id, json::object{{"mcp_response", std::move(rpc)}}));
        } else if (subtype == "elicitation") {
            send(
                proc,
                stream_json::encode_control_success(
                    req.request_id, json::object{{"action", "decline"}}));
        } else {
            send(proc, stream_json::encode_refusal(req.request_id));
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
        settings_gone(proc, "the agent exited before it answered");
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
    std::uint64_t request_seq_{};
    std::string session_id_; // resume_sessions: the session a new process resumes

    struct PendingPermission {
        std::shared_ptr<Proc> proc; // the process waiting for the answer
        json::value input;          // the tool's input as asked (allow without a change)
    };

    std::map<std::string, PendingPermission> permissions_; // of the running turn

    // A settings change waiting for the process's answers (one per field asked).
    struct SettingsWait {
        std::size_t left{0};
        std::string error; // the first refusal
        Agent::SettingsDone done;
        std::shared_ptr<net::steady_timer> timer; // SETTINGS_ANSWER_TIMEOUT, cancelled once settled
    };

    struct PendingSettings {
        std::shared_ptr<Proc> proc; // the process asked
        std::string flag;           // the command-line flag it sets once taken
        std::string value;          // its value ("" removes the flag)
        std::shared_ptr<SettingsWait> wait;
    };

    std::map<std::string, PendingSettings> settings_pending_; // by request id

    static void settle(SettingsWait& w) {
        if (w.timer) {
            w.timer->cancel();
        }
        if (auto done = std::exchange(w.done, nullptr)) {
            done(w.error);
        }
    }

    void settings_answered(const std::string& id, std::string error) {
        auto it = settings_pending_.find(id);
        if (it == settings_pending_.end()) {
            return; // an interrupt's answer, or one nobody waits for any more
        }
        auto p = std::move(it->second);
        settings_pending_.erase(it);
        if (error.empty()) {
            set_flag(config_.argv, p.flag, p.value);
        } else if (p.wait->error.empty()) {
            p.wait->error = std::move(error);
        }
        if (--p.wait->left == 0) {
            settle(*p.wait);
        }
    }

    // The process asked (null: every one) ended before answering: those changes failed.
    void settings_gone(const std::shared_ptr<Proc>& proc, const char* why) {
        std::vector<std::string> ids;
        for (const auto& [id, p] : settings_pending_) {
            if (!proc || p.proc == proc) {
                ids.push_back(id);
            }
        }
        for (const auto& id : ids) {
            settings_answered(id, why);
        }
    }
};

} // namespace

std::unique_ptr<Agent>
make_process_agent(const net::any_io_executor& ex, ProcessAgentConfig config) {
    return std::make_unique<detail::PostingAgent<ProcessState>>(
        std::make_shared<ProcessState>(ex, std::move(config)), "process");
}

} // namespace sluice::runtime
