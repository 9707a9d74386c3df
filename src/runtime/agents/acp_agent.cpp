// AcpAgent: an agent speaking the Agent Client Protocol, hosted as a child process on stdio.
#include "agents/acp_updates.hpp"
#include "agents/line_process.hpp"
#include "agents/rpc_rows.hpp"
#include "agents/turn_queue.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/acp_agent.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <utility>

namespace sluice::runtime {

namespace json = boost::json;
using detail::LineProcess;
using detail::PendingTurn;

namespace {

// The protocol version sluice speaks (ACP's only one so far).
constexpr std::int64_t PROTOCOL_VERSION = 1;

// The one thread every ACP agent's file requests (fs/*) run on: blocking reads and writes stay
// off the I/O threads, and no seat gets a thread of its own.
net::thread_pool& file_thread() {
    static net::thread_pool pool{1};
    return pool;
}

// 32 random bits as hex: an agent's tag in its rows' message ids.
std::string random_tag() {
    std::random_device rd;
    std::array<char, 9> buf{};
    std::snprintf(buf.data(), buf.size(), "%08x", static_cast<unsigned>(rd()));
    return {buf.data(), 8};
}

// Everything an ACP agent owns, confined to its executor; shared so the process's handlers may
// run after the Agent object is gone.
class AcpState : public std::enable_shared_from_this<AcpState> {
public:
    AcpState(const net::any_io_executor& ex, AcpAgentConfig config)
        : ex_(ex)
        , config_(std::move(config))
        , queue_(ex)
        , timer_(ex)
        , start_timer_(ex)
        , session_id_(config_.session_id) {
        std::error_code ec;
        root_ = std::filesystem::weakly_canonical(
            std::filesystem::absolute(config_.working_dir, ec), ec);
        name_ = config_.argv.empty()
                    ? std::string("the ACP agent")
                    : std::filesystem::path(config_.argv.front()).filename().string();
    }

    [[nodiscard]] const net::any_io_executor& executor() const noexcept { return ex_; }

    void submit(PendingTurn turn) {
        if (queue_.push(std::move(turn))) {
            pump();
        }
    }

    void answer_permission(const PermissionAnswer& a) {
        const auto it = prompts_.find(a.request_id);
        if (it == prompts_.end() || !proc_) {
            return; // answered already, or the turn it belonged to is over
        }
        proc_->send(
            acp::result_line(it->second.id, acp::permission_result(it->second.options, a.allow)));
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
    enum class Phase { starting, sessioning, ready };

    struct OpenPrompt {
        json::value id;      // the request's JSON-RPC id
        json::value options; // what it offered
    };

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
            send_prompt();
        }
    }

    void send_prompt() {
        // Unique across turns, processes and hub restarts, as a Claude Code transcript's are
        // (a reader that dedupes rows by message id, as ccusage does, would merge turns).
        translator_.emplace(session_id_, tag_ + "-" + std::to_string(++prompts_sent_));
        prompt_req_ = call(
            "session/prompt",
            json::object{
                {"sessionId", session_id_},
                {"prompt",
                 json::array{json::object{{"type", "text"}, {"text", active_->prompt}}}}});
    }

    void end_turn(TurnEnd end) {
        if (!active_) {
            return;
        }
        auto turn = std::move(*active_);
        active_.reset();
        // What is still open is answered `cancelled` (ACP's rule); the seat shows it withdrawn.
        if (proc_) {
            for (const auto& [key, p] : prompts_) {
                proc_->send(acp::result_line(p.id, acp::permission_result(p.options, false, true)));
            }
        }
        prompts_.clear();
        timer_.cancel();
        prompt_req_ = 0;
        translator_.reset();
        active_cancel_ = CancelRegistration{};
        turn.sink->on_end(std::move(end));
        pump();
    }

    // Fails the running turn and ends the process (its state is unknown); the next turn
    // starts a new one, loading the session.
    void fail(std::string why) {
        stop_process();
        end_turn({TurnEnd::State::failed, std::move(why)});
    }

    void stop_process() {
        start_timer_.cancel();
        if (proc_) {
            proc_->terminate();
            proc_.reset();
        }
    }

    void on_cancelled(std::uint64_t seq) {
        if (!active_ || seq != turn_seq_ || cancelling_) {
            return;
        }
        cancelling_ = true;
        if (prompt_req_ == 0 || !proc_ || !proc_->writable()) {
            // Not prompted yet (the agent is still starting: it goes on starting for the next
            // turn), or nothing to tell.
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        proc_->send(
            acp::notification_line("session/cancel", json::object{{"sessionId", session_id_}}));
        for (const auto& [key, p] : prompts_) {
            proc_->send(acp::result_line(p.id, acp::permission_result(p.options, false, true)));
        }
        prompts_.clear();
        timer_.expires_after(config_.cancel_grace);
        timer_.async_wait([weak = weak_from_this(), seq = turn_seq_](boost::system::error_code ec) {
            auto self = weak.lock();
            if (ec || !self || !self->active_ || self->turn_seq_ != seq) {
                return;
            }
            // It did not stop in time: the process goes, the turn ends cancelled.
            self->stop_process();
            self->end_turn({TurnEnd::State::cancelled, "cancelled"});
        });
    }

    // ---- the process ----

    void spawn() {
        std::string error;
        if (config_.argv.empty()) {
            end_turn({TurnEnd::State::failed, "no ACP agent command line"});
            return;
        }
        LineProcess::Options opts{
            .child =
                {.argv = config_.argv,
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
            end_turn({TurnEnd::State::failed, "cannot start " + name_ + ": " + error});
            return;
        }
        phase_ = Phase::starting;
        next_id_ = 0;
        calls_.clear();
        init_req_ = call(
            "initialize",
            json::object{
                {"protocolVersion", PROTOCOL_VERSION},
                {"clientCapabilities",
                 json::object{
                     {"fs", json::object{{"readTextFile", true}, {"writeTextFile", true}}},
                     {"terminal", false}}},
                {"clientInfo",
                 json::object{{"name", "sluice"}, {"title", "sluice"}, {"version", "1"}}}});
        start_timer_.expires_after(config_.start_timeout);
        start_timer_.async_wait([weak = weak_from_this(), seq](boost::system::error_code ec) {
            auto self = weak.lock();
            if (ec || !self || self->proc_seq_ != seq || self->phase_ == Phase::ready) {
                return;
            }
            self->fail(
                self->name_ + " did not answer its start within "
                + std::to_string(self->config_.start_timeout.count()) + " ms");
        });
    }

    std::int64_t call(std::string_view method, json::object params) {
        const auto id = ++next_id_;
        calls_[id] = std::string(method);
        proc_->send(acp::request_line(id, method, std::move(params)));
        return id;
    }

    void on_gone(const detail::ProcessGone& gone) {
        proc_.reset();
        start_timer_.cancel();
        if (!active_) {
            return;
        }
        if (cancelling_) {
            end_turn({TurnEnd::State::cancelled, "cancelled"});
            return;
        }
        end_turn({TurnEnd::State::failed, gone.describe(name_)});
    }

    void on_line(const json::value& line, bool malformed) {
        std::string bad;
        const auto m = detail::read_rpc_line(line, malformed, bad);
        using Kind = detail::RpcLine::Kind;
        if (m.kind == Kind::request) {
            client_request(*m.id, m.method, *m.params);
        } else if (m.kind == Kind::notification) {
            notification(m.method, *m.params);
        } else if (m.kind == Kind::answer) {
            response(m.answer_id, *m.result, m.error);
        } else if (!bad.empty()) {
            // ACP is JSON-RPC objects only: the process is not what we think it is.
            fail(name_ + " wrote a line that is not a JSON-RPC message: " + bad);
        }
    }

    void response(std::int64_t id, const json::object& result, const std::string& error) {
        if (calls_.erase(id) == 0) {
            return;
        }
        if (id == init_req_) {
            initialized(result, error);
        } else if (id == session_req_) {
            session_answered(result, error);
        } else if (id == prompt_req_) {
            prompt_answered(result, error);
        }
    }

    void initialized(const json::object& result, const std::string& error) {
        if (!error.empty()) {
            fail(name_ + " refused to initialize: " + error);
            return;
        }
        const auto* version = result.if_contains("protocolVersion");
        if (version == nullptr || !version->is_int64()
            || version->get_int64() != PROTOCOL_VERSION) {
            fail(
                name_ + " speaks ACP version "
                + (version != nullptr ? json::serialize(*version) : std::string("(none)"))
                + "; sluice speaks version 1");
            return;
        }
        bool can_load = false;
        if (const auto* caps = result.if_contains("agentCapabilities");
            caps != nullptr && caps->is_object()) {
            const auto* load = caps->get_object().if_contains("loadSession");
            can_load = load != nullptr && load->is_bool() && load->get_bool();
        }
        agent_name_.clear();
        agent_version_.clear();
        if (const auto* info = result.if_contains("agentInfo");
            info != nullptr && info->is_object()) {
            agent_name_ = std::string(str_field(info->get_object(), "title"));
            if (agent_name_.empty()) {
                agent_name_ = std::string(str_field(info->get_object(), "name"));
            }
            agent_version_ = std::string(str_field(info->get_object(), "version"));
        }
        phase_ = Phase::sessioning;
        json::object params{{"cwd", root_.string()}, {"mcpServers", json::array{}}};
        loading_ = !session_id_.empty() && can_load;
        not_loaded_ = !session_id_.empty() && !can_load ? session_id_ : std::string();
        if (loading_) {
            params["sessionId"] = session_id_;
            session_req_ = call("session/load", std::move(params));
        } else {
            session_req_ = call("session/new", std::move(params));
        }
    }

    void session_answered(const json::object& result, const std::string& error) {
        session_req_ = 0;
        if (!error.empty()) {
            if (loading_) {
                // A session the agent no longer has would fail every prompt: the next prompt
                // starts a new one, and this one says so.
                const auto old = session_id_;
                session_id_.clear();
                fail(
                    name_ + " could not load session " + old + ": " + error
                    + " (the next prompt starts a new session)");
            } else {
                fail(name_ + " could not start a session: " + error);
            }
            return;
        }
        if (!loading_) {
            session_id_ = std::string(str_field(result, "sessionId"));
            if (session_id_.empty()) {
                fail(name_ + " answered session/new without a session id");
                return;
            }
        }
        phase_ = Phase::ready;
        start_timer_.cancel();
        json::object row{
            {"type", "system"},
            {"subtype", "init"},
            {"agent", "acp"},
            {"session_id", session_id_},
            {"cwd", root_.string()},
            {"resumed", loading_}};
        if (!agent_name_.empty()) {
            row["agent_name"] = agent_name_;
        }
        if (!agent_version_.empty()) {
            row["agent_version"] = agent_version_;
        }
        if (!not_loaded_.empty()) {
            row["not_resumed"] =
                name_ + " cannot load sessions: session " + not_loaded_ + " was not resumed";
        }
        if (const auto* models = result.if_contains("models");
            models != nullptr && models->is_object()) {
            if (const auto* m = find_str(models->get_object(), "currentModelId")) {
                row["model"] = *m;
            }
        }
        if (const auto* modes = result.if_contains("modes");
            modes != nullptr && modes->is_object()) {
            if (const auto* m = find_str(modes->get_object(), "currentModeId")) {
                row["mode"] = *m;
            }
        }
        loading_ = false;
        if (!active_) {
            return; // the turn that started it was cancelled: the next one prompts
        }
        active_->sink->on_event(SessionStarted{session_id_, std::move(row)});
        send_prompt();
    }

    void prompt_answered(const json::object& result, const std::string& error) {
        prompt_req_ = 0;
        if (!active_ || !translator_) {
            return;
        }
        const auto stop = error.empty() ? str_field(result, "stopReason") : std::string_view{};
        const auto* usage = result.if_contains("usage");
        auto out = translator_->finish(
            stop, error, usage != nullptr && usage->is_object() ? &usage->get_object() : nullptr);
        for (auto& row : out.rows) {
            active_->sink->on_row(std::move(row));
        }
        if (!error.empty()) {
            end_turn({TurnEnd::State::failed, name_ + " failed the prompt: " + error});
        } else if (stop == "cancelled") {
            end_turn(
                cancelling_ ? TurnEnd{TurnEnd::State::cancelled, "cancelled"}
                            : TurnEnd{TurnEnd::State::ended, {}});
        } else {
            end_turn({}); // end_turn, max_tokens, refusal…: the result row says which
        }
    }

    void
    client_request(const json::value& id, std::string_view method, const json::object& params) {
        if (method == "session/request_permission") {
            if (!active_ || !translator_ || str_field(params, "sessionId") != session_id_
                || cancelling_) {
                proc_->send(acp::result_line(id, acp::permission_result(nullptr, false, true)));
                return;
            }
            if (const auto* call = params.if_contains("toolCall");
                call != nullptr && call->is_object()) {
                auto out = translator_->on_requested_call(call->get_object());
                for (auto& row : out.rows) {
                    active_->sink->on_row(std::move(row));
                }
            }
            auto key = json::serialize(id);
            const auto* options = params.if_contains("options");
            prompts_[key] = OpenPrompt{id, options != nullptr ? *options : json::value(nullptr)};
            active_->sink->on_event(acp::permission_of(params, std::move(key)));
            return;
        }
        if (method.starts_with("fs/") && str_field(params, "sessionId") != session_id_) {
            proc_->send(acp::error_line(id, -32602, "unknown session"));
            return;
        }
        // File I/O blocks: every client method is served on the file thread, never on this (an
        // I/O thread's) strand; the answer goes to the process that asked, if it is still there.
        net::post(
            file_thread(),
            [weak = weak_from_this(),
             ex = ex_,
             seq = proc_seq_,
             id,
             method = std::string(method),
             params,
             root = root_,
             max = config_.max_file_bytes] {
                auto answer = acp::serve_client(method, params, root, max);
                net::post(ex, [weak, seq, id, answer = std::move(answer)] {
                    auto self = weak.lock();
                    if (!self || self->proc_seq_ != seq || !self->proc_) {
                        return;
                    }
                    self->proc_->send(
                        answer.code != 0 ? acp::error_line(id, answer.code, answer.message)
                                         : acp::result_line(id, answer.result));
                });
            });
    }

    void notification(std::string_view method, const json::object& params) {
        if (method != "session/update") {
            return;
        }
        // A loaded session's history comes back as updates: the seat has it already.
        if (loading_ || !active_ || !translator_ || prompt_req_ == 0
            || str_field(params, "sessionId") != session_id_) {
            return;
        }
        const auto* update = params.if_contains("update");
        if (update == nullptr || !update->is_object()) {
            return;
        }
        auto out = translator_->on_update(update->get_object());
        for (auto& row : out.rows) {
            active_->sink->on_row(std::move(row));
        }
        if (out.preview) {
            active_->sink->on_preview(std::move(*out.preview));
        }
    }

    net::any_io_executor ex_;
    AcpAgentConfig config_;
    detail::TurnQueue queue_;
    net::steady_timer timer_;       // the cancel grace
    net::steady_timer start_timer_; // initialize and the session, answered
    std::filesystem::path root_;    // the working directory, canonical: files are served inside
    std::string name_;              // the executable's name, for error lines
    std::shared_ptr<LineProcess> proc_;
    std::uint64_t proc_seq_{};
    Phase phase_{Phase::starting};
    std::int64_t next_id_{};
    std::map<std::int64_t, std::string> calls_; // our requests awaiting an answer: their method
    std::int64_t init_req_{};
    std::int64_t session_req_{};
    std::int64_t prompt_req_{};
    bool loading_{false};
    std::string not_loaded_; // a session the agent could not load (it cannot load any)
    std::string session_id_;
    std::string agent_name_;
    std::string agent_version_;
    std::optional<PendingTurn> active_;
    CancelRegistration active_cancel_;
    std::uint64_t turn_seq_{};
    bool cancelling_{false};
    std::optional<acp::TurnTranslator> translator_;
    std::string tag_{random_tag()}; // this agent's, for the rows' message ids
    std::uint64_t prompts_sent_{};
    std::map<std::string, OpenPrompt> prompts_; // open permission requests, by key
};

} // namespace

std::unique_ptr<Agent> make_acp_agent(const net::any_io_executor& ex, AcpAgentConfig config) {
    return std::make_unique<detail::PostingAgent<AcpState>>(
        std::make_shared<AcpState>(ex, std::move(config)), "acp");
}

} // namespace sluice::runtime
