// The builtin agent: turns run by sluice's Runtime as coroutines on the agent's executor.
#include "agents/turn_queue.hpp"

#include <sluice/core/relay_reader.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/frame_builder.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <exception>
#include <vector>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

using detail::PendingTurn;

// Everything a builtin agent owns, confined to its executor. Shared: a running turn's
// coroutine keeps it alive after the Agent object is gone.
class BuiltinState : public std::enable_shared_from_this<BuiltinState> {
public:
    BuiltinState(
        const net::any_io_executor& ex,
        const RuntimeConfig& config,
        const std::vector<json::object>& rows)
        : ex_(ex)
        , runtime_(std::make_unique<Runtime>(ex, config))
        , session_id_(make_uuid())
        , queue_(ex) {
        for (auto& m : messages_from_rows(rows)) {
            history_.push_back(std::make_shared<const json::value>(std::move(m)));
        }
    }

    [[nodiscard]] const net::any_io_executor& executor() const noexcept { return ex_; }

    // On ex_.
    void submit(PendingTurn turn) {
        if (queue_.push(std::move(turn))) {
            pump();
        }
    }

    // On ex_: the Agent is gone. The running turn is cancelled (it ends through its relay).
    void close() {
        current_.cancel();
        queue_.close();
    }

private:
    void pump() {
        if (running_ || queue_.closed()) {
            return;
        }
        auto turn = queue_.pop();
        if (!turn) {
            return;
        }
        running_ = true;
        current_ = CancellationToken{};
        net::co_spawn(
            ex_,
            [self = shared_from_this(), t = std::move(*turn), token = current_]() mutable {
                return self->run_turn(std::move(t), std::move(token));
            },
            [self = shared_from_this()](const std::exception_ptr& e) {
                detail::log_escaped(e, "builtin turn");
                self->running_ = false;
                self->pump();
            });
    }

    net::awaitable<void> run_turn(PendingTurn turn, CancellationToken token) {
        bool ended = false;
        try {
            if (turn.cancel.is_cancelled() || token.is_cancelled()) {
                ended = true;
                turn.sink->on_end({TurnEnd::State::cancelled, "cancelled"});
                co_return;
            }
            // Thread-safe: cancels the relay's turn from the canceller's thread.
            auto link = turn.cancel.on_cancel(
                [token, from = turn.cancel]() mutable { token.cancel(from.reason()); });
            std::vector<json::value> messages;
            messages.reserve(history_.size() + 1);
            for (const auto& m : history_) {
                messages.push_back(*m); // the runtime takes its own copy of the history
            }
            json::value prompt_message = json::object{{"role", "user"}, {"content", turn.prompt}};
            messages.push_back(prompt_message);
            // Repair first (idempotent; the runtime repairs again) so the frame builder's base
            // counts the messages the runtime's history will start with.
            messages = repair_history(std::move(messages));
            FrameBuilder frames(session_id_, messages.size(), runtime_->config().model);
            std::shared_ptr<const std::vector<session::HistoryMessage>> latest;
            auto rx = runtime_->run_stream_with_messages(std::move(messages), token);
            RelayReader reader(rx);
            while (auto ev = co_await reader.next()) {
                if (is_preview(*ev)) {
                    turn.sink->on_preview(std::move(*ev));
                    continue;
                }
                if (const auto* h = std::get_if<session::MessageHistory>(&*ev)) {
                    latest = h->messages;
                }
                for (auto& row : frames.on_event(*ev)) {
                    turn.sink->on_row(std::move(row));
                }
            }
            if (latest) {
                history_.assign(latest->begin(), latest->end()); // shared pointers, no deep copy
            } else {
                history_.push_back(std::make_shared<const json::value>(std::move(prompt_message)));
            }
            TurnEnd end;
            if (const auto& err = frames.error()) {
                end.state = err->outcome == session::Outcome::cancelled ? TurnEnd::State::cancelled
                                                                        : TurnEnd::State::failed;
                end.error = err->message;
            } else if (!frames.finished()) {
                end = {TurnEnd::State::failed, "the turn ended without Done"};
            }
            ended = true;
            turn.sink->on_end(std::move(end));
        } catch (const std::exception& e) {
            if (!ended) {
                turn.sink->on_end(
                    {TurnEnd::State::failed, std::string("agent error: ") + e.what()});
            }
        }
    }

    net::any_io_executor ex_;
    std::unique_ptr<Runtime> runtime_;
    std::string session_id_;
    std::vector<session::HistoryMessage> history_;
    detail::TurnQueue queue_;
    CancellationToken current_; // the running turn's token
    bool running_{false};
};

} // namespace

std::unique_ptr<Agent> make_builtin_agent(
    const net::any_io_executor& ex,
    const RuntimeConfig& config,
    const std::vector<json::object>& history_rows) {
    return std::make_unique<detail::PostingAgent<BuiltinState>>(
        std::make_shared<BuiltinState>(ex, config, history_rows), "builtin");
}

} // namespace sluice::runtime
