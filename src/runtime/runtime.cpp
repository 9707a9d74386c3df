// Runtime: the turn loop as a coroutine on the runtime's executor — provider rounds, tools,
// history — into a relay.
#include "text_util.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/runtime.hpp>
#include <sluice/runtime/tools/tools.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <set>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

std::string_view role_of(const json::value& m) {
    const auto* o = m.if_object();
    const auto* r = o == nullptr ? nullptr : o->if_contains("role");
    return r != nullptr && r->is_string() ? std::string_view(r->get_string()) : std::string_view{};
}

// The content of a message as an array of blocks (a string becomes one text block).
json::array content_blocks(const json::value& m) {
    const auto* o = m.if_object();
    const auto* c = o == nullptr ? nullptr : o->if_contains("content");
    if (c == nullptr) {
        return {};
    }
    if (c->is_string()) {
        if (c->get_string().empty()) {
            return {};
        }
        return json::array{json::object{{"type", "text"}, {"text", c->get_string()}}};
    }
    if (c->is_array()) {
        return c->get_array();
    }
    return {};
}

std::string_view block_type(const json::value& b) {
    const auto* o = b.if_object();
    const auto* t = o == nullptr ? nullptr : o->if_contains("type");
    return t != nullptr && t->is_string() ? std::string_view(t->get_string()) : std::string_view{};
}

std::string block_str(const json::value& b, std::string_view key) {
    const auto* o = b.if_object();
    const auto* v = o == nullptr ? nullptr : o->if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string{};
}

// A message as a provider request carries it: role and content only.
json::value request_message(const json::value& m) {
    const auto* o = m.if_object();
    if (o == nullptr) {
        return m;
    }
    json::object out;
    if (const auto* r = o->if_contains("role"); r != nullptr) {
        out["role"] = *r;
    }
    if (const auto* c = o->if_contains("content"); c != nullptr) {
        out["content"] = *c;
    }
    return out;
}

session::Outcome outcome_of(const boost::system::error_code& ec, const CancellationToken& cancel) {
    if (ec == errc::cancelled || cancel.is_cancelled()) {
        return session::Outcome::cancelled;
    }
    if (ec == errc::timed_out) {
        return session::Outcome::timed_out;
    }
    return session::Outcome::failed;
}

} // namespace

std::vector<json::value> repair_history(std::vector<json::value> messages) {
    // Pass 1: merge adjacent same-role messages, drop empty ones.
    std::vector<json::value> merged;
    merged.reserve(messages.size());
    for (auto& m : messages) {
        const auto role = role_of(m);
        if (role.empty()) {
            continue;
        }
        auto blocks = content_blocks(m);
        if (blocks.empty()) {
            continue;
        }
        if (!merged.empty() && role_of(merged.back()) == role) {
            auto& prev = merged.back().as_object();
            auto prev_blocks = content_blocks(merged.back());
            for (auto& b : blocks) {
                prev_blocks.push_back(std::move(b));
            }
            prev["content"] = std::move(prev_blocks);
            continue;
        }
        json::object o = m.as_object();
        o["content"] = std::move(blocks);
        merged.emplace_back(std::move(o));
    }
    // Pass 2: every tool_use is answered by a tool_result in the next (user) message.
    std::vector<json::value> out;
    out.reserve(merged.size() + 1);
    for (std::size_t i = 0; i < merged.size(); ++i) {
        out.push_back(std::move(merged[i]));
        if (role_of(out.back()) != "assistant") {
            continue;
        }
        std::vector<std::string> ids;
        for (const auto& b : out.back().as_object().at("content").as_array()) {
            if (block_type(b) == "tool_use") {
                ids.push_back(block_str(b, "id"));
            }
        }
        const bool next_is_user = i + 1 < merged.size() && role_of(merged[i + 1]) == "user";
        json::array next_blocks = next_is_user ? content_blocks(merged[i + 1]) : json::array{};
        std::set<std::string> answered;
        json::array results;
        json::array others;
        for (auto& b : next_blocks) {
            if (block_type(b) == "tool_result") {
                answered.insert(block_str(b, "tool_use_id"));
                results.push_back(std::move(b));
            } else {
                others.push_back(std::move(b));
            }
        }
        bool changed = false;
        for (const auto& id : ids) {
            if (!answered.contains(id)) {
                results.push_back(json::object{
                    {"type", "tool_result"},
                    {"tool_use_id", id},
                    {"content", "not run: the turn ended before this tool ran"},
                    {"is_error", true}});
                changed = true;
            }
        }
        if (!changed) {
            continue;
        }
        for (auto& b : others) {
            results.push_back(std::move(b));
        }
        if (next_is_user) {
            merged[i + 1].as_object()["content"] = std::move(results);
        } else {
            out.push_back(json::object{{"role", "user"}, {"content", std::move(results)}});
        }
    }
    return out;
}

struct Runtime::State {
    boost::asio::any_io_executor ex;
    std::shared_ptr<Provider> provider;
    std::vector<std::shared_ptr<Tool>> tools;
    std::mutex mu;
    std::condition_variable cv;
    bool running{false};    // a turn coroutine has not finished its turn; guarded by mu
    CancellationToken turn; // the running turn's token; guarded by mu
};

namespace {

// One turn: a coroutine on the runtime's executor.
class TurnLoop {
public:
    TurnLoop(
        const RuntimeConfig& config,
        Provider& provider,
        const std::vector<std::shared_ptr<Tool>>& tools,
        RelaySender& tx,
        CancellationToken cancel)
        : config_(config)
        , provider_(provider)
        , tools_(tools)
        , tx_(tx)
        , cancel_(std::move(cancel)) {}

    // Runs the turn; returns its final events (Usage, Error?, Done), which the caller sends
    // after releasing the provider, so a caller that saw Done can start the next turn at once.
    boost::asio::awaitable<std::vector<StreamEvent>> run(std::vector<json::value> messages) {
        total_.model = model();
        const auto budget = config_.cost_of && config_.budget_left ? config_.budget_left()
                                                                   : std::optional<double>();
        try {
            history_ = std::make_shared<std::vector<session::HistoryMessage>>();
            for (auto& m : repair_history(std::move(messages))) {
                history_->push_back(std::make_shared<const json::value>(std::move(m)));
            }
            if (budget && *budget <= 0) { // spent before it began (it waited in a queue)
                fail(budget_message(std::max(*budget, 0.0)), session::Outcome::over_budget);
                co_return std::move(finals_);
            }
            for (std::uint32_t round = 0;; ++round) {
                if (round >= config_.max_rounds) {
                    fail(
                        "round limit reached: " + std::to_string(config_.max_rounds)
                            + " model responses without an end of turn",
                        session::Outcome::failed);
                    co_return std::move(finals_);
                }
                if (cancel_.is_cancelled()) {
                    fail(cancelled_message(), session::Outcome::cancelled);
                    co_return std::move(finals_);
                }
                auto next = co_await one_round();
                if (!next) {
                    co_return std::move(finals_); // failed: already recorded
                }
                if (!*next) {
                    break;
                }
                if (budget) {
                    if (const auto spent = config_.cost_of(total_); spent && *spent >= *budget) {
                        fail(budget_message(*budget), session::Outcome::over_budget);
                        co_return std::move(finals_);
                    }
                }
            }
            finals_.emplace_back(total_);
            finals_.emplace_back(session::Done{});
        } catch (const std::exception& e) {
            finals_.clear();
            fail(std::string("runtime error: ") + e.what(), session::Outcome::failed);
        }
        co_return std::move(finals_);
    }

private:
    std::string model() const {
        return !config_.model.empty() ? config_.model : config_.provider.model;
    }

    void send(StreamEvent ev) {
        if (!tx_.send(std::move(ev))) {
            cancel_.cancel(); // the caller is gone: stop producing
        }
    }

    void fail(std::string message, session::Outcome outcome) {
        finals_.emplace_back(total_);
        finals_.emplace_back(session::Error{std::move(message), outcome});
        finals_.emplace_back(session::Done{});
    }

    // The text of an answer cut by a cancel, as far as it streamed. Bounded: past the limit the
    // rest is dropped and the kept text says so (the whole answer is in no frame anyway).
    struct Streamed {
        static constexpr std::size_t MAX_BYTES = 1024 * 1024; // far above a readable answer
        std::string text;
        bool cut{false};

        void add(std::string_view more) {
            if (text.size() + more.size() > MAX_BYTES) {
                cut = true;
                return;
            }
            text.append(more);
        }
    };

    // Claude Code's words for a turn ended by --max-budget-usd.
    static std::string budget_message(double budget) {
        std::array<char, 64> buf{};
        std::snprintf(buf.data(), buf.size(), "Reached maximum budget ($%.2f)", budget);
        return buf.data();
    }

    // "cancelled", or who stopped the turn when the canceller said (CancellationToken::reason).
    std::string cancelled_message() const {
        std::string why = cancel_.reason();
        return why.empty() ? std::string("cancelled") : why;
    }

    // A stopped answer is kept, as Claude Code keeps it: an assistant message marked
    // `interrupted` with the text that streamed, in the history (the next request sees it) and
    // as a frame (FrameBuilder copies the mark onto the row). Thinking is not kept: an unsigned
    // thinking block would be refused in the next request.
    void keep_interrupted(Streamed streamed) {
        if (streamed.text.empty()) {
            return;
        }
        if (streamed.cut) {
            streamed.text += "\n\n[… the rest of the answer was not kept]";
        }
        append(json::object{
            {"role", "assistant"},
            {"content",
             json::array{json::object{{"type", "text"}, {"text", std::move(streamed.text)}}}},
            {"interrupted", true}});
    }

    void append(json::value message) {
        auto next =
            std::make_shared<std::vector<session::HistoryMessage>>(*history_); // pointers only
        next->push_back(std::make_shared<const json::value>(std::move(message)));
        history_ = std::move(next);
        send(session::MessageHistory{history_});
    }

    // nullopt: failed (reported); true: another round; false: the turn is over.
    boost::asio::awaitable<std::optional<bool>> one_round() {
        ProviderRequest req;
        req.model = model();
        req.system = config_.system_prompt;
        req.messages.reserve(history_->size());
        for (const auto& m : *history_) {
            req.messages.push_back(request_message(*m));
        }
        for (const auto& t : tools_) {
            req.tools.push_back(t->spec());
        }
        req.max_tokens = config_.max_tokens;
        req.thinking_budget = config_.thinking_budget;
        Streamed streamed; // the answer's text as it streamed, kept if the turn is stopped
        const EventSink sink = [this, &streamed](StreamEvent ev) {
            if (const auto* t = std::get_if<llm::Text>(&ev)) {
                streamed.add(t->text);
            }
            send(std::move(ev));
        };
        auto r = co_await provider_.stream(req, cancel_, sink);
        if (!r) {
            auto msg = provider_.error_message();
            if (msg.empty()) {
                msg = r.error().message();
            }
            const auto outcome = outcome_of(r.error(), cancel_);
            if (outcome == session::Outcome::cancelled) {
                keep_interrupted(std::move(streamed));
                msg = cancelled_message();
            }
            fail(std::move(msg), outcome);
            co_return std::nullopt;
        }
        auto& resp = *r;
        total_.input += resp.usage.input;
        total_.output += resp.usage.output;
        total_.cache_read += resp.usage.cache_read;
        total_.cache_creation += resp.usage.cache_creation;
        if (!resp.usage.model.empty()) {
            total_.model = resp.usage.model;
        }
        std::vector<json::value> calls;
        for (const auto& b : content_blocks(resp.assistant_message)) {
            if (block_type(b) == "tool_use") {
                calls.push_back(b);
            }
        }
        append(std::move(resp.assistant_message));
        switch (resp.stop_reason) {
        case StopReason::tool_use:
            break;
        case StopReason::pause_turn:
            co_return true;
        case StopReason::max_tokens:
            send(session::Notice{"the response was cut at the output token limit"});
            co_return false;
        case StopReason::refusal:
            send(session::Notice{"the model refused to answer"});
            co_return false;
        default:
            co_return false;
        }
        if (calls.empty()) {
            co_return false;
        }
        json::array results;
        for (const auto& call : calls) {
            if (cancel_.is_cancelled()) {
                fail(cancelled_message(), session::Outcome::cancelled);
                co_return std::nullopt;
            }
            auto res = co_await run_tool(call);
            results.push_back(json::object{
                {"type", "tool_result"},
                {"tool_use_id", res.tool_id},
                {"content", res.result},
                {"is_error", res.is_error}});
            send(std::move(res));
        }
        if (cancel_.is_cancelled()) {
            fail(cancelled_message(), session::Outcome::cancelled);
            co_return std::nullopt;
        }
        append(json::object{{"role", "user"}, {"content", std::move(results)}});
        co_return true;
    }

    boost::asio::awaitable<llm::ToolResult> run_tool(const json::value& call) {
        const std::string id = block_str(call, "id");
        const std::string name = block_str(call, "name");
        const auto* input = call.as_object().if_contains("input");
        auto it = std::find_if(
            tools_.begin(), tools_.end(), [&](const auto& t) { return t->spec().name == name; });
        if (it == tools_.end()) {
            co_return llm::ToolResult{id, "tool '" + name + "' is not enabled", true};
        }
        detail::Utf8Repair repair;
        ToolContext ctx;
        ctx.cancel = cancel_;
        ctx.timeout = config_.tool_timeout;
        ctx.max_output = config_.max_tool_output;
        ctx.on_output = [&](std::string_view chunk) {
            std::string text;
            repair.feed(chunk, text);
            if (!text.empty()) {
                send(llm::ToolResultDelta{id, std::move(text)});
            }
        };
        ToolOutcome outcome;
        try {
            // The argument is built first: GCC 12 may destroy a temporary inside a co_await
            // expression twice.
            json::value arg = input != nullptr ? *input : json::value(json::object{});
            outcome = co_await (*it)->run(std::move(arg), std::move(ctx));
        } catch (const std::exception& e) {
            outcome = {std::string("tool failed: ") + e.what(), true};
        }
        std::string tail;
        repair.finish(tail);
        if (!tail.empty()) {
            send(llm::ToolResultDelta{id, std::move(tail)});
        }
        co_return llm::ToolResult{id, detail::repair_utf8(outcome.output), outcome.is_error};
    }

    const RuntimeConfig& config_;
    Provider& provider_;
    const std::vector<std::shared_ptr<Tool>>& tools_;
    RelaySender& tx_;
    CancellationToken cancel_;
    std::shared_ptr<std::vector<session::HistoryMessage>> history_;
    session::Usage total_;
    std::vector<StreamEvent> finals_;
};

std::vector<std::shared_ptr<Tool>> configured_tools(const RuntimeConfig& config) {
    auto names = config.tools;
    if (names.empty() && config.provider.kind == "scripted") {
        names.emplace_back("echo");
    }
    return make_tools(names, ToolOptions{config.working_dir});
}

} // namespace

Runtime::Runtime(boost::asio::any_io_executor ex, const RuntimeConfig& config)
    : Runtime(
        std::move(ex),
        config,
        std::shared_ptr<Provider>(make_provider(config.provider)),
        configured_tools(config)) {
}

Runtime::Runtime(
    boost::asio::any_io_executor ex,
    RuntimeConfig config,
    std::shared_ptr<Provider> provider,
    std::vector<std::shared_ptr<Tool>> tools)
    : config_(std::move(config))
    , state_(std::make_shared<State>()) {
    if (!provider) {
        throw std::invalid_argument("runtime: no provider");
    }
    state_->ex = std::move(ex);
    state_->provider = std::move(provider);
    state_->tools = std::move(tools);
}

Runtime::~Runtime() {
    // No join: the turn coroutine owns what it uses (the state, a copy of the configuration)
    // and finishes on its executor after the cancel.
    const std::lock_guard lock(state_->mu);
    if (state_->running) {
        state_->turn.cancel();
    }
}

RelayReceiver Runtime::run_stream_with_messages(
    std::vector<json::value> messages, const CancellationToken& cancel) {
    CancellationToken turn;
    auto [tx, rx] = make_stream_relay(turn);
    {
        std::unique_lock lock(state_->mu);
        if (state_->running) {
            lock.unlock();
            tx.send(session::Error{
                "a turn is already running on this runtime", session::Outcome::failed});
            tx.send(session::Done{});
            tx.close();
            return std::move(rx);
        }
        state_->running = true;
        state_->turn = turn;
    }
    // The caller's token cancels the turn's own token (which the relay also cancels when the
    // receiver goes away); the destructor cancels it too.
    auto link = cancel.on_cancel([turn, from = cancel]() mutable { turn.cancel(from.reason()); });
    boost::asio::co_spawn(
        state_->ex,
        [state = state_,
         config = config_,
         msgs = std::move(messages),
         tx = std::move(tx),
         turn,
         link = std::move(link)]() mutable -> boost::asio::awaitable<void> {
            // Whatever happens (even the frame destroyed with its context), the runtime becomes
            // idle; the relay ends when `tx` goes.
            struct Idle {
                explicit Idle(State& s)
                    : state(s) {}
                State& state;
                bool released{false};
                void release() {
                    if (!released) {
                        released = true;
                        const std::lock_guard lock(state.mu);
                        state.running = false;
                        state.cv.notify_all();
                    }
                }
                Idle(const Idle&) = delete;
                Idle& operator=(const Idle&) = delete;
                ~Idle() { release(); }
            } idle{*state};
            TurnLoop loop(config, *state->provider, state->tools, tx, turn);
            auto finals = co_await loop.run(std::move(msgs));
            link = CancelRegistration{};
            // The provider and tools are free: a caller that sees Done may start the next turn.
            idle.release();
            for (auto& ev : finals) {
                tx.send(std::move(ev));
            }
            tx.close();
        },
        [](const std::exception_ptr& e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    spdlog::error("runtime: a turn ended by an exception: {}", ex.what());
                } catch (...) {
                    spdlog::error("runtime: a turn ended by an unknown exception");
                }
            }
        });
    return std::move(rx);
}

bool Runtime::wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(state_->mu);
    return state_->cv.wait_for(lock, timeout, [this] { return !state_->running; });
}

} // namespace sluice::runtime
