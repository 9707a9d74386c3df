// HookBridge: a terminal session's permission prompts that arrived through Claude Code's hooks,
// the hooks waiting on them, and what the transcript has shown of their tools. Private to the
// hub: a seat of a local session owns one from its first hook on (hub/hooks.hpp).
#pragma once

#include <sluice/detail/net.hpp>
#include <sluice/hub/feed.hpp>
#include <sluice/hub/hooks.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/deque.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::hub {

/// A hooked session's prompts: a PermissionRequest hook becomes a pending prompt shown through
/// the host; the first answer from any screen, or its end (answered in the terminal — the
/// transcript's tool result, PostToolUse, Stop —, the session's end, its hook's timeout, or its
/// hook gone) is handed to the hook that waits on it (`wait`, a long-poll).
///
/// @par Thread safety
/// Strand-confined: every member on the owning seat's strand (`ex`). Its timers hold it weakly
/// and its host weakly: a seat that goes takes its bridge with it.
class HookBridge : public std::enable_shared_from_this<HookBridge> {
public:
    /// What `wait` hands back, on the strand.
    using WaitDone = std::function<void(Result<HookOutcome>)>;

    /// @param host the seat (its prompts' cards) @param ex its strand @param feed its feed (the
    /// window whose frames show the terminal's answers)
    HookBridge(std::weak_ptr<HookHost> host, net::any_io_executor ex, const Feed& feed);

    /// Takes what a hook of the session reported. @return the prompt's request id for a
    /// PermissionRequest, else "".
    std::string call(const HookCall& call);

    /// The window grew or was replaced: a tool call a prompt asked about, and its result (the
    /// terminal answered first), are looked for in the new frames.
    void seen();

    /// Hooked prompt `answer.request_id` was answered (`by`): its hook is told.
    void answered(const runtime::PermissionAnswer& answer, const std::string& by);

    /// Waits at most `wait` for prompt `request_id` to be answered or closed: `done` gets its
    /// outcome (once; a later wait is not_found), or `pending` when `wait` passed first.
    void wait(const std::string& request_id, std::chrono::milliseconds wait, WaitDone done);

    /// The seat closes: every waiting hook ends with no decision.
    void closed();

    /// Whether a hook of the session reached this hub (until SessionEnd).
    [[nodiscard]] bool hooked() const noexcept { return hooked_; }

    /// Whether Claude Code waits on the person (a prompt pending, or a Notification).
    [[nodiscard]] bool waiting() const noexcept { return waiting_ || !pending_.empty(); }

private:
    struct Waiter {
        WaitDone done;                            // emptied once called
        std::unique_ptr<net::steady_timer> timer; // ends the wait with `pending`
    };

    struct Prompt {
        std::string tool_name;
        boost::json::value input;
        std::optional<std::string> tool_use_id; // its transcript tool_use, once seen
        bool unread{false}; // asked before the session file was read (matched once it is)
        std::chrono::steady_clock::time_point deadline; // the hook's own timeout
        std::chrono::steady_clock::time_point gone_at;  // no wait asked by then: hook gone
        std::unique_ptr<net::steady_timer> timer;       // fires at the nearer of the two
        std::vector<std::shared_ptr<Waiter>> waiters;
    };

    struct Found {
        std::string id;
        bool answered{false}; // its tool_result is in the window too
    };

    [[nodiscard]] bool claimed(const std::string& tool_use_id) const;
    [[nodiscard]] std::optional<Found> find_tool_use(
        const std::string& name, const boost::json::value& input, bool answered_too = false) const;
    void close(const std::string& id, const std::string& reason);
    void ended(const std::string& id, HookOutcome outcome);
    void arm(const std::string& id);
    void expired(const std::string& id);

    std::weak_ptr<HookHost> host_;
    net::any_io_executor ex_;
    const Feed& feed_;
    bool hooked_{false};
    bool waiting_{false};
    std::map<std::string, Prompt> pending_; // request id → prompt
    // Ended prompts whose hook has not fetched the outcome (newest last, HOOK_OUTCOMES_KEPT).
    boost::container::deque<std::pair<std::string, HookOutcome>> ended_;
    std::uint64_t scanned_{}; // window position up to which frames were looked at
    std::string scanned_epoch_;
};

} // namespace sluice::hub
