// PermissionPrompts: a hosted seat's permission prompts — the pending ones of its running turn,
// and the newest resolved ones, so a late answer learns how and by whom it was answered.
#pragma once

#include <sluice/hub/failure.hpp>
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/container/deque.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace sluice::hub {

/// Resolved prompts remembered for a 409 (a late answer); older ones answer 404.
inline constexpr std::size_t RESOLVED_PERMISSIONS_KEPT = 256;

/// The prompts an agent asked and how they ended. Not thread-safe (its seat's strand).
class PermissionPrompts {
public:
    /// Takes note of a request (pending) or a resolution (resolved, remembered); other events
    /// are ignored. @return whether the pending prompts changed.
    bool note(const runtime::AgentEvent& event);

    /// Why `request_id` cannot be answered now: not_found (no such prompt, or answered too long
    /// ago), conflict (already answered: how and by whom). Nothing when it is pending.
    [[nodiscard]] std::optional<Failure> refuse_answer(const std::string& request_id) const;

    /// Forgets the pending prompts (their conversation was replaced); the resolved ones stay
    /// remembered.
    void forget_pending() {
        pending_.clear();
        json_ = "[]";
    }

    /// The oldest pending prompt's id (by id order), or nothing.
    [[nodiscard]] std::optional<std::string> first_pending() const;

    /// How many prompts wait for an answer.
    [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

    /// The pending prompts, a JSON array of their rows (made again only when they change).
    [[nodiscard]] const std::string& json() const noexcept { return json_; }

private:
    std::map<std::string, std::string> pending_; // request id → its row
    boost::container::deque<std::pair<std::string, std::string>> resolved_; // id → "how by who"
    std::string json_{"[]"};
};

} // namespace sluice::hub
