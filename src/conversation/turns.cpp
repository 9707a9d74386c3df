// TurnScan: the state machine over the frames' classified roles.
#include <sluice/conversation/turns.hpp>

#include <algorithm>
#include <utility>

namespace sluice {

bool TurnScan::opens_turn(const Frame& f) {
    if (!f.is_frame()) {
        ++fed_;
        return false;
    }
    return opens_turn(f.type(), f.facts());
}

bool TurnScan::opens_turn(std::string_view type, const TurnFacts& t) {
    ++fed_;
    if (t.subagent || !is_frame_type(type)) {
        return false; // sub-agent frames interleave inline; they never touch the main state
    }
    const bool after_command = std::exchange(after_command_, false);
    const bool skill_pending = std::exchange(skill_pending_, false);
    switch (t.role) {
    case FrameRole::compact_boundary:
        after_boundary_ = true;
        in_tool_ = false;
        return false;
    case FrameRole::other:
        if (type == "assistant") {
            after_boundary_ = false;
            in_tool_ = t.tool_call;
            skill_calls_.insert(skill_calls_.end(), t.skill_calls.begin(), t.skill_calls.end());
        }
        return false;
    case FrameRole::tool_result:
        in_tool_ = true;
        for (const auto& id : t.results_for) {
            auto it = std::find(skill_calls_.begin(), skill_calls_.end(), id);
            if (it != skill_calls_.end()) {
                skill_calls_.erase(it);
                skill_pending_ = true;
            }
        }
        return false;
    case FrameRole::continuation:
        after_boundary_ = false;
        return false;
    case FrameRole::note:
        return false;
    case FrameRole::image:
        if (in_tool_ || skill_pending || after_boundary_) {
            return false; // an image note that follows a tool call
        }
        break;
    case FrameRole::prompt:
        if (std::exchange(after_boundary_, false) || skill_pending || after_command) {
            return false; // a continuation, or the body of the skill / command just called
        }
        break;
    case FrameRole::command:
        after_command_ = true;
        after_boundary_ = false;
        break;
    }
    in_tool_ = false;
    skill_calls_.clear();
    return true;
}

} // namespace sluice
