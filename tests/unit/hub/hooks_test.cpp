// Unit tests of hub/hooks.hpp: Claude Code's hook calls parsed, a hooked prompt's outcome.
#include <sluice/hub/hooks.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace sluice::hub {
namespace {

namespace json = boost::json;

json::object body(std::string_view event, json::object input) {
    return {{"event", event}, {"input", std::move(input)}};
}

json::object permission_input() {
    return {
        {"session_id", "5b3f6a2e-1c4d"},
        {"transcript_path", "/home/me/.claude/projects/-x/5b3f6a2e-1c4d.jsonl"},
        {"cwd", "/home/me/x"},
        {"hook_event_name", "PermissionRequest"},
        {"tool_name", "Bash"},
        {"tool_input", {{"command", "npm test"}}}};
}

TEST(HookCall, ParsesAPermissionRequestAsClaudeCodeWritesIt) {
    auto b = body("PermissionRequest", permission_input());
    b["timeout_ms"] = 30000;
    const auto call = parse_hook_call(b);
    ASSERT_TRUE(call) << call.error().message;
    EXPECT_EQ(call->event, HookEvent::permission_request);
    EXPECT_EQ(call->session_id, "5b3f6a2e-1c4d");
    EXPECT_EQ(call->cwd, "/home/me/x");
    EXPECT_EQ(call->tool_name, "Bash");
    EXPECT_EQ(call->tool_input, json::parse(R"({"command":"npm test"})"));
    EXPECT_EQ(call->timeout, std::chrono::milliseconds(30000));
}

TEST(HookCall, CapsTheTimeoutAndDefaultsItToTenMinutes) {
    auto b = body("PermissionRequest", permission_input());
    EXPECT_EQ(parse_hook_call(b)->timeout, std::chrono::minutes(10));
    b["timeout_ms"] = std::int64_t{1} << 50;
    EXPECT_EQ(parse_hook_call(b)->timeout, HOOK_TIMEOUT_MAX);
}

TEST(HookCall, RefusesWhatIsNotAHookOfOurs) {
    const std::vector<json::object> bad{
        body("PreCompact", permission_input()),             // not an event sluice takes
        {{"input", permission_input()}},                    // no event
        {{"event", "Stop"}, {"input", "x"}},                // input not an object
        body("Stop", {{"session_id", "../etc"}}),           // not an id
        body("Stop", {{"session_id", 7}}),                  // not a string
        body("PermissionRequest", {{"session_id", "abc"}}), // no tool
        [] {                                                // a negative timeout
            auto b = body("PermissionRequest", permission_input());
            b["timeout_ms"] = -1;
            return b;
        }(),
    };
    for (const auto& b : bad) {
        const auto call = parse_hook_call(b);
        ASSERT_FALSE(call) << json::serialize(b);
        EXPECT_EQ(call.error().code, make_error_code(errc::bad_request));
    }
}

TEST(HookCall, NamesEveryEventBothWays) {
    for (const auto* name :
         {"PermissionRequest",
          "Notification",
          "Stop",
          "SessionStart",
          "SessionEnd",
          "PostToolUse"}) {
        const auto e = hook_event(name);
        ASSERT_TRUE(e) << name;
        EXPECT_EQ(hook_event_name(*e), name);
    }
    EXPECT_FALSE(hook_event("permissionrequest"));
}

TEST(HookOutcome, SaysOnlyWhatItsStateCarries) {
    HookOutcome pending;
    EXPECT_EQ(json::value(pending.json()), json::parse(R"({"state":"pending"})"));
    HookOutcome deny{HookOutcome::State::deny, "api", "not now", "", nullptr};
    EXPECT_EQ(
        json::value(deny.json()),
        json::parse(R"({"state":"deny","by":"api","message":"not now"})"));
    HookOutcome allow{HookOutcome::State::allow, "page", "", "", json::object{{"command", "ls"}}};
    EXPECT_EQ(
        json::value(allow.json()),
        json::parse(R"({"state":"allow","by":"page","updated_input":{"command":"ls"}})"));
    HookOutcome closed{HookOutcome::State::closed, "", "", "answered in the terminal", nullptr};
    EXPECT_EQ(
        json::value(closed.json()),
        json::parse(R"({"state":"closed","reason":"answered in the terminal"})"));
}

} // namespace
} // namespace sluice::hub
