// CodexAgent: OpenAI's Codex CLI hosted as `codex app-server`, JSON-RPC on stdio.
#include "agents/codex_items.hpp"
#include "agents/line_process.hpp"
#include "agents/rpc_rows.hpp"
#include "agents/turn_queue.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace sluice::runtime {

namespace json = boost::json;
using detail::LineProcess;
using detail::PendingTurn;

namespace {

// What sluice calls itself in `initialize` (Codex records it as the thread's originator).
constexpr std::string_view CLIENT_NAME = "sluice";

// Everything a Codex agent owns, confined to its executor; shared so the process's handlers
// may run after the Agent object is gone.
class CodexState : public std::enable_shared_from_this<CodexState> {
public:
    CodexState(const net::any_io_executor& ex, CodexAgentConfig config)
        : ex_(ex)
        , config_(std::move(config))
        , queue_(ex)
        , timer_(ex)
        , thread_id_(config_.thread_id) {}

    [[nodiscard]] const net::any_io_executor& executor() const noexcept { return ex_; }

    void submit(PendingTurn turn) {
        if (queue_.push(std::move(turn))) {
            pump();
        }
    }

    [[nodiscard]] static bool takes_settings() noexcept { return true; }

    // Codex takes a model and an approval policy with each turn (and keeps them for the turns
    // after): a change is checked here and carried by the next turn/start.
    void apply_settings(const AgentSettings& a, const Agent::SettingsDone& done) {
        if (a.permission_mode) {
            const auto policy = AgentSettings::kept(*a.permission_mode);
            if (!policy.empty() && !codex::is_approval_policy(policy)) {
                done(
                    {.error =
                         "approval policy must be one of " + std::string(codex::APPROVAL_POLICIES),
                     .model = {}});
                return;
            }
        }
        if (a.permission_mode) {
            config_.approval_policy = AgentSettings::kept(*a.permission_mode);
        }
        if (a.model) {
            config_.model = AgentSettings::kept(*a.model);
        }
        done({});
    }

    void answer_permission(const PermissionAnswer& a) {
        const auto it = prompts_.find(a.request_id);
        if (it == prompts_.end() || !proc_) {
            return; // answered already, or the turn it belonged to is over
        }
        proc_->send(codex::approval_reply(it->second, a.allow));
        prompts_.erase(it);
    }

    void close() {
        queue_.close(); // first: ending the active turn must not start a queued one
        end_turn(detail::AGENT_CLOSED);
        if (proc_) {
            proc_->terminate();
            proc_.reset();
        }
    }

private:
    enum class Phase { starting, threading, ready };

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
        turn_id_.clear();
        turn_started_ = false;
        if (active_->cancel.is_cancelled()) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        active_cancel_ = detail::post_on_cancel(
            active_->cancel, ex_, [weak = weak_from_this(), seq = turn_seq_] {
                if (auto self = weak.lock()) {
                    self->on_cancelled(seq);
                }
            });
        if (!proc_) {
            spawn();
            return;
        }
        if (phase_ == Phase::ready) {
            start_codex_turn();
        }
    }

    void start_codex_turn() {
        translator_.emplace(thread_id_, config_.model.empty() ? model_ : config_.model);
        json::object params{
            {"threadId", thread_id_},
            {"input",
             json::array{json::object{
                 {"type", "text"}, {"text", active_->prompt}, {"text_elements", json::array{}}}}}};
        with_settings(params);
        turn_req_ = call("turn/start", std::move(params));
    }

    void end_turn(TurnEnd end) {
        if (!active_) {
            return;
        }
        auto turn = std::move(*active_);
        active_.reset();
        prompts_.clear(); // the seat resolves what was still pending as withdrawn
        timer_.cancel();
        turn_req_ = 0;
        turn_id_.clear();
        translator_.reset();
        active_cancel_ = CancelRegistration{};
        turn.sink->on_end(std::move(end));
        pump();
    }

    // Fails the running turn and ends the process (its state is unknown); the next turn
    // starts a new one, resuming the thread.
    void fail(std::string why) {
        if (proc_) {
            proc_->terminate();
            proc_.reset();
        }
        end_turn({TurnEnd::State::failed, std::move(why)});
    }

    void on_cancelled(std::uint64_t seq) {
        if (!active_ || seq != turn_seq_ || cancelling_) {
            return;
        }
        cancelling_ = true;
        if (!proc_ || !proc_->writable()) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        if (turn_id_.empty()) {
            // Not started in Codex yet (or its start is unanswered): the interrupt goes out
            // once turn/start answers; the grace bounds that too.
            if (phase_ != Phase::ready || turn_req_ == 0) {
                fail_cancelled();
                return;
            }
        } else {
            interrupt();
        }
        arm(config_.interrupt_grace, [](CodexState& self) { self.fail_cancelled(); });
    }

    void interrupt() {
        call("turn/interrupt", json::object{{"threadId", thread_id_}, {"turnId", turn_id_}});
    }

    // A cancelled turn Codex did not end in time: the process goes, the turn ends cancelled.
    void fail_cancelled() {
        if (proc_) {
            proc_->terminate();
            proc_.reset();
        }
        end_turn({TurnEnd::State::cancelled, "cancelled"});
    }

    template <class F>
    void arm(std::chrono::milliseconds after, F on_expiry) {
        timer_.expires_after(after);
        timer_.async_wait(
            [weak = weak_from_this(), seq = turn_seq_, on_expiry](boost::system::error_code ec) {
                auto self = weak.lock();
                if (ec || !self || !self->active_ || self->turn_seq_ != seq) {
                    return;
                }
                on_expiry(*self);
            });
    }

    // ---- the process ----

    void spawn() {
        std::string error;
        LineProcess::Options opts{
            .child =
                {.argv = {config_.bin, "app-server"},
                 .cwd = config_.working_dir,
                 .stdin_pipe = true,
                 .separate_stderr = true,
                 .env = config_.env},
            .max_line_bytes = config_.max_line_bytes,
            .terminate_grace = config_.terminate_grace};
        LineProcess::Handlers handlers;
        const auto seq = ++proc_seq_;
        handlers.on_line = [weak = weak_from_this(), seq](const json::value& line, bool malformed) {
            if (auto self = weak.lock(); self && self->proc_seq_ == seq && self->proc_) {
                self->on_line(line, malformed);
            }
        };
        handlers.on_gone = [weak = weak_from_this(), seq](const detail::ProcessGone& gone) {
            if (auto self = weak.lock(); self && self->proc_seq_ == seq) {
                self->on_gone(gone);
            }
        };
        proc_ = LineProcess::spawn(ex_, std::move(opts), std::move(handlers), error);
        if (!proc_) {
            end_turn({TurnEnd::State::failed, "cannot start codex: " + error});
            return;
        }
        phase_ = Phase::starting;
        next_id_ = 0;
        calls_.clear();
        init_req_ = call(
            "initialize",
            json::object{
                {"clientInfo",
                 json::object{{"name", CLIENT_NAME}, {"title", "sluice"}, {"version", "1"}}},
                // thread/resume by path and other experimental fields need it.
                {"capabilities", json::object{{"experimentalApi", true}}}});
        arm(config_.start_timeout, [](CodexState& self) {
            if (self.phase_ != Phase::ready) {
                self.fail(
                    "codex did not answer its start within "
                    + std::to_string(self.config_.start_timeout.count()) + " ms");
            }
        });
    }

    std::int64_t call(std::string_view method, json::object params) {
        const auto id = ++next_id_;
        calls_[id] = std::string(method);
        proc_->send(codex::request_line(id, method, std::move(params)));
        return id;
    }

    void with_settings(json::object& params) const {
        if (!config_.model.empty()) {
            params["model"] = config_.model;
        }
        if (!config_.approval_policy.empty()) {
            params["approvalPolicy"] = config_.approval_policy;
        }
    }

    void on_gone(const detail::ProcessGone& gone) {
        proc_.reset();
        if (!active_) {
            return;
        }
        if (cancelling_) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        end_turn({TurnEnd::State::failed, gone.describe("codex")});
    }

    void on_line(const json::value& line, bool malformed) {
        std::string bad;
        const auto m = detail::read_rpc_line(line, malformed, bad);
        using Kind = detail::RpcLine::Kind;
        if (m.kind == Kind::request) {
            server_request(*m.id, m.method, *m.params);
        } else if (m.kind == Kind::notification) {
            notification(m.method, *m.params);
        } else if (m.kind == Kind::answer) {
            response(m.answer_id, *m.result, m.error);
        } else if (!bad.empty()) {
            // Codex speaks JSON objects only: the process is not what we think it is.
            fail("codex wrote a line that is not a JSON-RPC message: " + bad);
        }
    }

    void response(std::int64_t id, const json::object& result, const std::string& error) {
        const auto it = calls_.find(id);
        if (it == calls_.end()) {
            return;
        }
        const auto method = std::move(it->second);
        calls_.erase(it);
        if (id == init_req_) {
            if (!error.empty()) {
                fail("codex refused to initialize: " + error);
                return;
            }
            proc_->send(codex::notification_line("initialized"));
            start_thread();
        } else if (id == thread_req_) {
            thread_answered(result, error);
        } else if (id == turn_req_) {
            turn_req_ = 0;
            if (!error.empty()) {
                end_turn({TurnEnd::State::failed, "codex refused the turn: " + error});
                return;
            }
            if (const auto* turn = result.if_contains("turn");
                turn != nullptr && turn->is_object()) {
                turn_id_ = std::string(str_field(turn->get_object(), "id"));
            }
            if (cancelling_ && !turn_id_.empty()) {
                interrupt();
            }
        } else if (method == "turn/interrupt" && !error.empty() && active_ && cancelling_) {
            fail_cancelled(); // it would not stop: the process goes
        }
    }

    void start_thread() {
        phase_ = Phase::threading;
        json::object params{{"cwd", config_.working_dir}};
        with_settings(params);
        resuming_ = !thread_id_.empty();
        if (resuming_) {
            params["threadId"] = thread_id_;
            // The answer then holds no turns: a long thread's history is not sent to us.
            params["excludeTurns"] = true;
            thread_req_ = call("thread/resume", std::move(params));
        } else {
            thread_req_ = call("thread/start", std::move(params));
        }
    }

    void thread_answered(const json::object& result, const std::string& error) {
        thread_req_ = 0;
        if (!error.empty()) {
            if (resuming_) {
                // A thread Codex no longer has (its rollout gone) would fail every prompt: the
                // next prompt starts a new thread, and this one says so.
                const auto old = thread_id_;
                thread_id_.clear();
                fail(
                    "codex could not resume thread " + old + ": " + error
                    + " (the next prompt starts a new thread)");
            } else {
                fail("codex could not start a thread: " + error);
            }
            return;
        }
        const auto* thread = result.if_contains("thread");
        if (thread == nullptr || !thread->is_object()) {
            fail("codex answered the thread start without a thread");
            return;
        }
        thread_id_ = std::string(str_field(thread->get_object(), "id"));
        model_ = std::string(str_field(result, "model"));
        phase_ = Phase::ready;
        timer_.cancel();
        json::object row{
            {"type", "system"},
            {"subtype", "init"},
            {"agent", "codex"},
            {"session_id", thread_id_},
            {"cwd", str_field(result, "cwd")},
            {"model", model_},
            {"resumed", resuming_}};
        if (const auto* policy = find_str(result, "approvalPolicy")) {
            row["approval_policy"] = *policy;
        }
        if (const auto* path = find_str(thread->get_object(), "path")) {
            row["rollout_path"] = *path;
        }
        if (!active_) {
            return;
        }
        active_->sink->on_event(SessionStarted{thread_id_, std::move(row)});
        if (cancelling_) {
            fail_cancelled();
            return;
        }
        start_codex_turn();
    }

    void
    server_request(const json::value& id, std::string_view method, const json::object& params) {
        if (active_ && translator_ && str_field(params, "threadId") == thread_id_) {
            auto key = json::serialize(id);
            const auto* changes = translator_->changes_of(std::string(str_field(params, "itemId")));
            if (auto prompt = codex::permission_of(method, params, key, changes)) {
                prompts_[key] = id;
                active_->sink->on_event(std::move(*prompt));
                return;
            }
        }
        proc_->send(codex::refusal_line(id, method));
    }

    void notification(std::string_view method, const json::object& params) {
        if (method == "serverRequest/resolved") {
            // Codex took a prompt back itself (the turn was interrupted): nobody answers it.
            const auto* rid = params.if_contains("requestId");
            if (rid == nullptr) {
                return;
            }
            const auto key = json::serialize(*rid);
            if (prompts_.erase(key) > 0 && active_) {
                active_->sink->on_event(
                    PermissionResolved{key, PermissionResolved::Behavior::withdrawn, "agent"});
            }
            return;
        }
        if (!active_ || !translator_) {
            return; // between turns: nothing to show
        }
        if (const auto* t = find_str(params, "threadId"); t != nullptr && *t != thread_id_) {
            return;
        }
        const auto* turn = params.if_contains("turn");
        const json::object* turn_obj =
            turn != nullptr && turn->is_object() ? &turn->get_object() : nullptr;
        std::string_view turn_id = str_field(params, "turnId");
        if (turn_obj != nullptr) {
            turn_id = str_field(*turn_obj, "id");
        }
        if (!turn_id.empty() && !turn_id_.empty() && turn_id != turn_id_) {
            return; // another turn's (a restored one's)
        }
        if (method == "turn/started") {
            turn_started_ = true;
            if (turn_id_.empty()) {
                turn_id_ = std::string(turn_id);
            }
            return;
        }
        if (method == "turn/completed" && turn_obj != nullptr) {
            if (turn_id_.empty() && turn_req_ != 0) {
                return; // not ours: ours has not been answered yet
            }
            turn_completed(*turn_obj);
            return;
        }
        if (method == "thread/tokenUsage/updated" && !turn_started_) {
            return; // a resumed thread's restored totals, not this turn's usage
        }
        auto out = translator_->on_notification(method, params);
        for (auto& row : out.rows) {
            active_->sink->on_row(std::move(row));
        }
        if (out.preview) {
            active_->sink->on_preview(std::move(*out.preview));
        }
    }

    void turn_completed(const json::object& turn) {
        const auto status = str_field(turn, "status");
        active_->sink->on_row(translator_->result_row(turn));
        if (status == "completed") {
            end_turn({});
        } else if (status == "interrupted") {
            end_turn(
                cancelling_ ? TurnEnd{TurnEnd::State::cancelled, "cancelled"}
                            : TurnEnd{TurnEnd::State::ended, {}});
        } else {
            std::string why = translator_->error();
            if (const auto* e = turn.if_contains("error"); e != nullptr && e->is_object()) {
                why = std::string(str_field(e->get_object(), "message"));
            }
            end_turn({TurnEnd::State::failed, why.empty() ? "the codex turn failed" : why});
        }
    }

    net::any_io_executor ex_;
    CodexAgentConfig config_;
    detail::TurnQueue queue_;
    net::steady_timer timer_; // the start timeout, then the interrupt grace
    std::shared_ptr<LineProcess> proc_;
    std::uint64_t proc_seq_{};
    Phase phase_{Phase::starting};
    std::int64_t next_id_{};
    std::map<std::int64_t, std::string> calls_; // our requests awaiting an answer: their method
    std::int64_t init_req_{};
    std::int64_t thread_req_{};
    std::int64_t turn_req_{};
    bool resuming_{false};
    std::string thread_id_;
    std::string model_; // the model Codex says the thread runs
    std::optional<PendingTurn> active_;
    CancelRegistration active_cancel_;
    std::uint64_t turn_seq_{};
    bool cancelling_{false};
    std::string turn_id_;
    bool turn_started_{false};
    std::optional<codex::TurnTranslator> translator_;
    std::map<std::string, json::value> prompts_; // open approvals: their JSON-RPC id, by key
};

} // namespace

std::unique_ptr<Agent> make_codex_agent(const net::any_io_executor& ex, CodexAgentConfig config) {
    return std::make_unique<detail::PostingAgent<CodexState>>(
        std::make_shared<CodexState>(ex, std::move(config)), "codex");
}

} // namespace sluice::runtime
