// Tests of AgentEvent: each event's row, as the transcript and the page keep it.
#include <sluice/runtime/agents/agent_events.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::runtime {
namespace {

namespace json = boost::json;

TEST(AgentEvent, RecordsEachEventAsItsRow) {
    PermissionRequest ask;
    ask.request_id = "r9";
    ask.tool_name = "Bash";
    ask.tool_use_id = "toolu_1";
    ask.input = json::parse(R"({"command":"touch x"})");
    ask.title = "Create x";
    PermissionRequest bare;
    bare.request_id = "r2";
    bare.tool_name = "Write";
    bare.title = "Allow Write?";
    const auto agent_row =
        json::parse(
            R"({"type":"system","subtype":"session_state_changed","state":"idle","uuid":"u"})")
            .as_object();

    struct Case {
        const char* name;
        AgentEvent event;
        std::string want;
    };

    const std::vector<Case> cases = {
        {"permission request",
         ask,
         R"({"type":"system","subtype":"permission_request","request_id":"r9","tool_name":"Bash",)"
         R"("tool_use_id":"toolu_1","input":{"command":"touch x"},"title":"Create x",)"
         R"("decision_reason":null})"},
        {"permission request, fields absent",
         bare,
         R"({"type":"system","subtype":"permission_request","request_id":"r2","tool_name":"Write",)"
         R"("tool_use_id":null,"input":null,"title":"Allow Write?","decision_reason":null})"},
        {"allowed",
         PermissionResolved{"r9", PermissionResolved::Behavior::allow, "cli"},
         R"({"type":"system","subtype":"permission_resolved","request_id":"r9",)"
         R"("behavior":"allow","by":"cli"})"},
        {"denied",
         PermissionResolved{"r9", PermissionResolved::Behavior::deny, "web"},
         R"({"type":"system","subtype":"permission_resolved","request_id":"r9",)"
         R"("behavior":"deny","by":"web"})"},
        {"withdrawn",
         PermissionResolved{"r9", PermissionResolved::Behavior::withdrawn, "agent"},
         R"({"type":"system","subtype":"permission_resolved","request_id":"r9",)"
         R"("behavior":"withdrawn","by":"agent"})"},
        {"session state: the agent's row",
         SessionStateChanged{"idle", agent_row},
         json::serialize(agent_row)},
        {"session start: the agent's row",
         SessionStarted{"s1", json::object{{"type", "system"}, {"subtype", "init"}}},
         R"({"type":"system","subtype":"init"})"},
        {"reset: the agent's row",
         ConversationReset{json::object{{"type", "conversation_reset"}}},
         R"({"type":"conversation_reset"})"},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(json::serialize(event_row(c.event)), c.want) << c.name;
    }
}

TEST(AgentEvent, SessionStateWaitsOnlyOnRequiresAction) {
    const auto waits = [](const char* state) {
        return SessionStateChanged{state, {}}.requires_action();
    };
    EXPECT_TRUE(waits("requires_action"));
    EXPECT_FALSE(waits("running"));
    EXPECT_FALSE(waits("idle"));
    EXPECT_FALSE(waits(""));
}

} // namespace
} // namespace sluice::runtime
