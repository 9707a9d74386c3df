// TurnRecorder: a TurnSink for tests that records rows, events, previews and the end, with waits.
#pragma once

#include <sluice/runtime/agents/agent.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sluice::runtime::test {

/// Records a turn. @par Thread safety: safe from any thread.
class TurnRecorder final : public TurnSink {
public:
    void on_row(boost::json::object row) override {
        std::lock_guard lock(mu_);
        rows_.push_back(std::move(row));
        cv_.notify_all();
    }

    /// Records the event, and its row among the rows (as the default on_event does).
    void on_event(AgentEvent event) override {
        std::lock_guard lock(mu_);
        events_.push_back(event);
        rows_.push_back(event_row(std::move(event)));
        cv_.notify_all();
    }

    void on_preview(StreamEvent preview) override {
        std::lock_guard lock(mu_);
        previews_.push_back(std::move(preview));
        cv_.notify_all();
    }

    void on_end(TurnEnd end) override {
        std::lock_guard lock(mu_);
        end_ = std::move(end);
        ++ends_;
        cv_.notify_all();
    }

    /// Waits for on_end.
    bool wait_end(std::chrono::milliseconds t) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, t, [&] { return ends_ > 0; });
    }

    /// Waits until `n` previews arrived.
    bool wait_previews(std::size_t n, std::chrono::milliseconds t) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, t, [&] { return previews_.size() >= n; });
    }

    /// Waits until `n` rows arrived.
    bool wait_rows(std::size_t n, std::chrono::milliseconds t) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, t, [&] { return rows_.size() >= n; });
    }

    std::vector<boost::json::object> rows() const {
        std::lock_guard lock(mu_);
        return rows_;
    }

    std::vector<AgentEvent> events() const {
        std::lock_guard lock(mu_);
        return events_;
    }

    std::vector<std::string> row_types() const {
        std::lock_guard lock(mu_);
        std::vector<std::string> out;
        for (const auto& r : rows_) {
            out.emplace_back(r.at("type").as_string());
        }
        return out;
    }

    std::vector<StreamEvent> previews() const {
        std::lock_guard lock(mu_);
        return previews_;
    }

    std::string text() const { return joined<llm::Text>(); }

    std::string thinking() const { return joined<llm::Thinking>(); }

    std::string tool_input() const { return joined<llm::ToolUseDelta>(); }

    std::string tool_output() const { return joined<llm::ToolResultDelta>(); }

    TurnEnd end() const {
        std::lock_guard lock(mu_);
        return end_;
    }

    int end_count() const {
        std::lock_guard lock(mu_);
        return ends_;
    }

private:
    template <class T>
    std::string joined() const {
        std::lock_guard lock(mu_);
        std::string s;
        for (const auto& p : previews_) {
            if (const auto* e = std::get_if<T>(&p)) {
                if constexpr (std::is_same_v<T, llm::Text> || std::is_same_v<T, llm::Thinking>) {
                    s += e->text;
                } else {
                    s += e->delta;
                }
            }
        }
        return s;
    }

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<boost::json::object> rows_;
    std::vector<AgentEvent> events_;
    std::vector<StreamEvent> previews_;
    TurnEnd end_;
    int ends_{0};
};

/// Starts a turn of `agent` recorded by a new TurnRecorder, which it returns.
inline std::shared_ptr<TurnRecorder>
run_turn(Agent& agent, std::string prompt, CancellationToken cancel = {}) {
    auto rec = std::make_shared<TurnRecorder>();
    agent.start_turn(std::move(prompt), std::move(cancel), rec);
    return rec;
}

/// The events of `rec` of type `E`, in order.
template <class E>
std::vector<E> events_of(const TurnRecorder& rec) {
    std::vector<E> out;
    for (const auto& e : rec.events()) {
        if (const auto* x = std::get_if<E>(&e)) {
            out.push_back(*x);
        }
    }
    return out;
}

} // namespace sluice::runtime::test
