// The builtin agent: turns run by sluice's Runtime, rows from a FrameBuilder, one thread per agent.
#include <sluice/runtime/agent.hpp>
#include <sluice/runtime/frame_builder.hpp>

#include <boost/json.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

struct PendingTurn {
    std::string prompt;
    CancellationToken cancel;
    std::shared_ptr<TurnSink> sink;
};

// Turns run one at a time on the agent's own thread, in the order started.
class BuiltinAgent final : public Agent {
public:
    BuiltinAgent(RuntimeConfig config, const std::vector<json::object>& history_rows)
        : runtime_(std::make_unique<Runtime>(std::move(config))), session_id_(make_uuid()) {
        for (auto& m : messages_from_rows(history_rows)) {
            history_.push_back(std::make_shared<const json::value>(std::move(m)));
        }
        thread_ = std::thread([this] { loop(); });
    }

    ~BuiltinAgent() override {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
            current_.cancel();
        }
        cv_.notify_all();
        thread_.join();
    }

    BuiltinAgent(const BuiltinAgent&) = delete;
    BuiltinAgent& operator=(const BuiltinAgent&) = delete;
    BuiltinAgent(BuiltinAgent&&) = delete;
    BuiltinAgent& operator=(BuiltinAgent&&) = delete;

    void start_turn(std::string prompt, CancellationToken cancel, std::shared_ptr<TurnSink> sink) override {
        {
            std::lock_guard lock(mu_);
            queue_.push_back({std::move(prompt), std::move(cancel), std::move(sink)});
        }
        cv_.notify_all();
    }

    std::string kind() const override { return "builtin"; }

private:
    void loop() {
        while (true) {
            PendingTurn turn;
            CancellationToken token;
            {
                std::unique_lock lock(mu_);
                cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) {
                    return;
                }
                turn = std::move(queue_.front());
                queue_.pop_front();
                if (stopping_) {
                    lock.unlock();
                    turn.sink->on_end({TurnEnd::State::cancelled, "the agent was closed"});
                    continue;
                }
                current_ = token;
            }
            run_one(turn, token);
        }
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

    void run_one(PendingTurn& turn, CancellationToken token) {
        bool ended = false;
        try {
            if (turn.cancel.is_cancelled()) {
                ended = true;
                turn.sink->on_end({TurnEnd::State::cancelled, "cancelled"});
                return;
            }
            auto link = turn.cancel.on_cancel([token]() mutable { token.cancel(); });
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
            // Now and then, end queued turns that were cancelled while this one runs.
            constexpr auto QUEUE_CHECK = std::chrono::milliseconds(100);
            auto next_check = std::chrono::steady_clock::now() + QUEUE_CHECK;
            while (true) {
                auto ev = rx.next_for(QUEUE_CHECK);
                if (std::chrono::steady_clock::now() >= next_check) {
                    end_cancelled_queued();
                    next_check = std::chrono::steady_clock::now() + QUEUE_CHECK;
                }
                if (!ev) {
                    if (rx.ended()) {
                        break;
                    }
                    continue;
                }
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
                turn.sink->on_end({TurnEnd::State::failed, std::string("agent error: ") + e.what()});
            }
        }
    }

    std::unique_ptr<Runtime> runtime_;
    std::string session_id_;
    std::vector<session::HistoryMessage> history_; // only the agent thread touches it
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<PendingTurn> queue_; // guarded by mu_
    CancellationToken current_;     // the running turn's token; guarded by mu_
    bool stopping_{false};          // guarded by mu_
    std::thread thread_;
};

} // namespace

std::unique_ptr<Agent> make_builtin_agent(RuntimeConfig config, std::vector<json::object> history_rows) {
    return std::make_unique<BuiltinAgent>(std::move(config), history_rows);
}

} // namespace sluice::runtime
