// TurnQueue: the FIFO of turns waiting for an agent, shared by the builtin and process agents.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::runtime::detail {

/// One turn as started.
struct PendingTurn {
    std::string prompt;
    CancellationToken cancel;
    std::shared_ptr<TurnSink> sink;
};

/// Turns waiting to run, oldest first. Unbounded by count: a seat bounds what it queues (it
/// refuses prompts beyond its own limit); each entry is a prompt and two shared pointers.
///
/// A queued turn whose token is cancelled (from any thread) ends `cancelled` at once: the
/// cancel callback posts to the executor, which removes the turn and calls its sink's `on_end`.
///
/// @par Thread safety
/// Confined to its executor (every member function runs there).
class TurnQueue {
public:
    explicit TurnQueue(boost::asio::any_io_executor ex);

    /// Queues `turn` (its sink is not called here); once closed, ends it `cancelled` instead.
    /// @return whether it was queued.
    bool push(PendingTurn turn);

    /// Takes the oldest turn, if any.
    std::optional<PendingTurn> pop();

    /// The agent is gone: ends every queued turn `cancelled` (in order), and every later one.
    void close();

    /// Whether `close` was called.
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    /// Whether no turn waits.
    [[nodiscard]] bool empty() const noexcept { return core_->entries.empty(); }

private:
    struct Entry {
        std::uint64_t id{};
        PendingTurn turn;
        CancelRegistration on_cancel;
    };

    struct Core {
        std::deque<Entry> entries;
    };

    boost::asio::any_io_executor ex_;
    std::shared_ptr<Core> core_;
    std::uint64_t next_id_{};
    bool closed_{false};
};

/// Registers `fn` to run on `ex` once `token` is cancelled (from whichever thread cancels it):
/// how an agent whose state is confined to its executor hears of a cancelled turn.
[[nodiscard]] inline CancelRegistration post_on_cancel(
    const CancellationToken& token, boost::asio::any_io_executor ex, std::function<void()> fn) {
    return token.on_cancel([ex = std::move(ex), fn = std::move(fn)] { boost::asio::post(ex, fn); });
}

/// How a turn ends when its agent is gone.
inline const TurnEnd AGENT_CLOSED{TurnEnd::State::cancelled, "the agent was closed"};

/// Logs an exception that escaped an agent's task (`what` names it); nothing for null. For the
/// completion handlers of co_spawn: a task catches what it expects, so this is a bug report.
void log_escaped(const std::exception_ptr& e, const char* what) noexcept;

/// The Agent both agent kinds hand out: a thin handle that posts every call to its state's
/// executor. `State` has `executor()`, `submit(PendingTurn)` and `close()`, all run there.
/// The destructor posts `close()` and returns: it never blocks or joins.
template <class State>
class PostingAgent final : public Agent {
public:
    PostingAgent(std::shared_ptr<State> state, std::string kind)
        : state_(std::move(state))
        , kind_(std::move(kind)) {}

    ~PostingAgent() override {
        boost::asio::post(state_->executor(), [s = state_] { s->close(); });
    }

    PostingAgent(const PostingAgent&) = delete;
    PostingAgent& operator=(const PostingAgent&) = delete;
    PostingAgent(PostingAgent&&) = delete;
    PostingAgent& operator=(PostingAgent&&) = delete;

    void start_turn(
        std::string prompt, CancellationToken cancel, std::shared_ptr<TurnSink> sink) override {
        boost::asio::post(
            state_->executor(),
            [s = state_,
             t = PendingTurn{std::move(prompt), std::move(cancel), std::move(sink)}]() mutable {
                s->submit(std::move(t));
            });
    }

    [[nodiscard]] std::string kind() const override { return kind_; }

    [[nodiscard]] bool takes_settings() const override {
        if constexpr (requires(State & s) { s.takes_settings(); }) {
            return state_->takes_settings(); // immutable configuration: safe from any thread
        } else {
            return false;
        }
    }

    void apply_settings(const AgentSettings& settings, SettingsDone done) override {
        if constexpr (requires(State & s, const AgentSettings& a, SettingsDone d) {
                          s.apply_settings(a, std::move(d));
                      }) {
            boost::asio::post(
                state_->executor(), [s = state_, a = settings, d = std::move(done)]() mutable {
                    s->apply_settings(a, std::move(d));
                });
        } else {
            boost::asio::post(state_->executor(), [d = std::move(done)] { d({}); });
        }
    }

    void answer_permission(PermissionAnswer answer) override {
        if constexpr (requires(State & s, PermissionAnswer a) {
                          s.answer_permission(std::move(a));
                      }) {
            boost::asio::post(state_->executor(), [s = state_, a = std::move(answer)]() mutable {
                s->answer_permission(std::move(a));
            });
        }
    }

private:
    std::shared_ptr<State> state_;
    std::string kind_;
};

} // namespace sluice::runtime::detail
