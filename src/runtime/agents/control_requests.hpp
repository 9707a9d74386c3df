// ControlRequests: a process agent's open control requests, both ways, kept without I/O.
#pragma once

#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/agent_events.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime::detail {

/// Names one process of an agent (its owner numbers them).
using ProcId = std::uint64_t;

/// A row for the stdin of process `proc`.
struct Outgoing {
    ProcId proc{};
    std::string line;
};

/// Sets `flag value` in `argv` (replacing the flag's value, else appending both); an empty
/// value removes the flag.
void set_flag(std::vector<std::string>& argv, std::string_view flag, const std::string& value);

/// The control requests of one process agent still open, in both directions: the agent's
/// permission prompts waiting for a person's answer (Agent::answer_permission), and sluice's
/// settings requests (set_permission_mode, set_model) waiting for the agent's
/// `control_response`. It decides and returns the stdin rows to write; it writes nothing and
/// owns no timer (the owner bounds a settings change and calls `expire`).
///
/// Bounded by what is open: one entry per prompt of the running turn, one per settings field
/// asked; `forget_prompts` at each turn end, and every settings request ends answered, expired
/// or gone with its process.
///
/// @par Thread safety
/// None: confined to the agent's executor.
class ControlRequests {
public:
    /// What to do with a control request of the agent.
    struct Taken {
        std::optional<PermissionRequest> prompt; ///< a prompt now open: hand it to the sink
        std::string reply;                       ///< else: the row answering it at once
    };

    /// The agent's control request `req`, from process `proc`. A can_use_tool prompt is kept
    /// open when `host` (the agent hosts permissions and `proc` runs the turn): its event is
    /// returned, and its answer comes through `answer`. Every other request is answered at
    /// once (stream_json::encode_default_answer).
    Taken on_request(ProcId proc, const stream_json::ControlRequest& req, bool host);

    /// The row carrying answer `a` to the process that asked, or none when nobody waits for it
    /// (withdrawn, or its turn ended). The prompt is closed.
    std::optional<Outgoing> answer(const PermissionAnswer& a);

    /// The agent withdrew request `id` (`control_cancel_request`): the event recording it, or
    /// none when no prompt of that id was open.
    std::optional<PermissionResolved> withdraw(const std::string& id);

    /// The turn ended: its open prompts are forgotten (the sink's owner resolves them).
    void forget_prompts() noexcept { prompts_.clear(); }

    /// A request id of sluice's, unique within this agent: `sluice-<what>-<n>`.
    [[nodiscard]] std::string next_id(std::string_view what);

    /// Names one settings change (Agent::apply_settings).
    using ChangeId = std::uint64_t;

    /// Opens a settings change: `done` gets no error once every field asked was taken, else
    /// the first refusal, with the model the agent reported using (a `set_model` answer's
    /// `model`); it runs once, from `settle_if_done`, `answered`, `expire` or `gone`.
    ChangeId open_change(Agent::SettingsDone done);

    /// Asks process `proc` one field of change `c` (`request`: e.g. `{"subtype":
    /// "set_model","model":…}`); once the agent takes it, `flag value` is set in the argv
    /// given to `answered` ("" removes the flag). @return the row to write to `proc`.
    [[nodiscard]] std::string
    ask(ChangeId c, ProcId proc, std::string flag, std::string value, boost::json::object request);

    /// Ends change `c` ("") if none of its fields is being asked. @return whether it ended.
    bool settle_if_done(ChangeId c);

    /// The agent's answer to request `id` ("" or its error; `response`: a success's body): a
    /// field taken sets its flag in `argv` — for `--model`, to the model the answer reports
    /// using when it names one (Claude Code remaps some names). An answer nobody waits for
    /// (an interrupt's, a late one) changes nothing.
    void answered(
        const std::string& id,
        std::string error,
        std::vector<std::string>& argv,
        const boost::json::object& response = {});

    /// Every field of change `c` still asked fails with `why` (the agent did not answer in time).
    void expire(ChangeId c, const char* why, std::vector<std::string>& argv);

    /// Every field asked of process `proc` (none: of any process) fails with `why`: it ended
    /// before answering.
    void gone(std::optional<ProcId> proc, const char* why, std::vector<std::string>& argv);

private:
    struct Prompt {
        ProcId proc{};            // the process waiting for the answer
        boost::json::value input; // the tool's input as asked (allow without a change)
    };

    // A settings change waiting for the agent's answers (one per field asked).
    struct Change {
        std::size_t left{0};
        std::string error; // the first refusal
        std::string model; // the model the agent reported using
        Agent::SettingsDone done;
    };

    struct Asked {
        ProcId proc{};     // the process asked
        std::string flag;  // the command-line flag it sets once taken
        std::string value; // its value ("" removes the flag)
        ChangeId change{};
    };

    void settle(ChangeId c);

    template <class Pred>
    void fail_where(Pred pred, const char* why, std::vector<std::string>& argv);

    std::map<std::string, Prompt> prompts_; // the running turn's, by request id
    std::map<std::string, Asked> asked_;    // by request id
    std::map<ChangeId, Change> changes_;    // open settings changes
    std::uint64_t request_seq_{};
    ChangeId change_seq_{};
};

} // namespace sluice::runtime::detail
