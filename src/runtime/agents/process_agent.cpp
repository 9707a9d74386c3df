// ProcessAgent: hosts an agent CLI speaking stream-json on stdio; pipes and exit on the executor.
#include "agents/control_requests.hpp"
#include "agents/line_process.hpp"
#include "agents/turn_queue.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::runtime {

namespace json = boost::json;
using detail::LineProcess;
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

// One agent process and what belongs to it: its pipes and exit (LineProcess), its name in
// ControlRequests, its stdout's stream-json decoder.
struct Proc {
    std::shared_ptr<LineProcess> io;
    ProcId id{};
    stream_json::Decoder decoder;
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
        const bool live = config_.live_settings && child_ && child_->io->writable();
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
        active_cancel_ = detail::post_on_cancel(
            active_->cancel, ex_, [weak = weak_from_this(), seq = turn_seq_] {
                if (auto self = weak.lock()) {
                    self->on_cancelled(seq);
                }
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
        if (!proc || proc->io->gone()) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        if (config_.control_interrupt && proc->io->writable()) {
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
        auto proc = std::make_shared<Proc>();
        proc->id = ++proc_seq_;
        // The handlers hold the process weakly: it holds them.
        LineProcess::Handlers handlers;
        handlers.on_line = [weak = weak_from_this(),
                            p = std::weak_ptr<Proc>(proc)](json::value line, bool /*malformed*/) {
            auto self = weak.lock();
            auto owned = p.lock();
            if (self && owned) {
                self->handle_line(owned, std::move(line)); // a stray non-JSON line is ignored
            }
        };
        handlers.on_gone = [weak = weak_from_this(),
                            p = std::weak_ptr<Proc>(proc)](const detail::ProcessGone& gone) {
            auto self = weak.lock();
            auto owned = p.lock();
            if (self && owned) {
                self->process_gone(owned, gone);
            }
        };
        proc->io = LineProcess::spawn(
            ex_,
            {.child = {.argv = std::move(argv), .cwd = config_.working_dir, .env = config_.env},
             .max_line_bytes = config_.max_line_bytes,
             .terminate_grace = config_.terminate_grace},
            std::move(handlers),
            error);
        if (!proc->io) {
            end_turn({TurnEnd::State::failed, "cannot start the agent: " + error});
            return false;
        }
        child_ = proc;
        procs_.push_back(proc);
        return true;
    }

    // Ends the process: stdin closed, SIGTERM to its group, SIGKILL after terminate_grace. The
    // next turn starts a new process.
    // NOLINTNEXTLINE(performance-unnecessary-value-param): by value, it may reset child_
    void terminate(std::shared_ptr<Proc> proc) {
        if (child_ == proc) {
            child_.reset();
        }
        proc->io->terminate();
    }

    static void send(const std::shared_ptr<Proc>& proc, std::string line) {
        proc->io->send(std::move(line));
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

    void process_gone(const std::shared_ptr<Proc>& proc, const detail::ProcessGone& gone) {
        std::erase(procs_, proc);
        if (child_ == proc) {
            child_.reset();
        }
        control_.gone(proc->id, "the agent exited before it answered", config_.argv);
        if (!active_ || turn_proc_ != proc) {
            return;
        }
        if (cancelling_ && gone.too_long == 0) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        end_turn({TurnEnd::State::failed, gone.describe()});
    }

    net::any_io_executor ex_;
    ProcessAgentConfig config_;
    detail::TurnQueue queue_;
    std::shared_ptr<Proc> child_; // the process the next turn uses (null: start one)
    // Every process not gone yet (a replaced one may still be ending): what keeps its Proc.
    std::vector<std::shared_ptr<Proc>> procs_;
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
