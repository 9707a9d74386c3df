// What every Agent shares: the FIFO TurnQueue (a queued turn cancelled from any thread ends at once
// on the executor) behind the PostingAgent handle; each factory lives with its agent beside this.
#include "agents/turn_queue.hpp"

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sluice::runtime::detail {

TurnQueue::TurnQueue(boost::asio::any_io_executor ex)
    : ex_(std::move(ex))
    , core_(std::make_shared<Core>()) {
}

bool TurnQueue::push(PendingTurn turn) {
    if (closed_) {
        turn.sink->on_end(AGENT_CLOSED);
        return false;
    }
    const std::uint64_t id = ++next_id_;
    auto token = turn.cancel;
    core_->entries.push_back({id, std::move(turn), {}});
    // Registered after the entry exists: an already-cancelled token runs this at once, and the
    // post keeps the sink call out of push (and so out of start_turn).
    core_->entries.back().on_cancel = token.on_cancel([weak = std::weak_ptr(core_), ex = ex_, id] {
        boost::asio::post(ex, [weak, id] {
            auto core = weak.lock();
            if (!core) {
                return;
            }
            auto it =
                std::find_if(core->entries.begin(), core->entries.end(), [id](const Entry& e) {
                    return e.id == id;
                });
            if (it == core->entries.end()) {
                return; // it runs already (or ended): its agent handles the cancel
            }
            auto sink = std::move(it->turn.sink);
            core->entries.erase(it);
            sink->on_end({TurnEnd::State::cancelled, "cancelled"});
        });
    });
    return true;
}

std::optional<PendingTurn> TurnQueue::pop() {
    if (core_->entries.empty()) {
        return std::nullopt;
    }
    auto turn = std::move(core_->entries.front().turn);
    core_->entries.pop_front();
    return turn;
}

void TurnQueue::close() {
    closed_ = true;
    auto entries = std::move(core_->entries);
    core_->entries.clear();
    for (auto& e : entries) {
        e.turn.sink->on_end(AGENT_CLOSED);
    }
}

void log_escaped(const std::exception_ptr& e, const char* what) noexcept {
    if (!e) {
        return;
    }
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        spdlog::error("agent: the {} task died: {}", what, ex.what());
    } catch (...) {
        spdlog::error("agent: the {} task died", what);
    }
}

} // namespace sluice::runtime::detail
