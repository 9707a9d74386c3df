// Unit tests of hub/permission_prompts.hpp: pending prompts as one JSON array, made again only
// when they change; a late answer told how and by whom; the newest resolved ones remembered.
#include <sluice/hub/permission_prompts.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace sluice::hub {
namespace {

using Behavior = runtime::PermissionResolved::Behavior;

runtime::AgentEvent ask(std::string id, std::string tool = "Bash") {
    runtime::PermissionRequest r;
    r.request_id = std::move(id);
    r.tool_name = std::move(tool);
    r.title = "Allow " + r.tool_name + "?";
    return r;
}

runtime::AgentEvent resolved(std::string id, Behavior b, std::string by) {
    return runtime::PermissionResolved{std::move(id), b, std::move(by)};
}

TEST(PermissionPrompts, PendingPromptsAreOneArrayOfTheirRows) {
    PermissionPrompts p;
    EXPECT_EQ(p.json(), "[]");
    EXPECT_TRUE(p.note(ask("r2", "Edit")));
    EXPECT_TRUE(p.note(ask("r1")));
    EXPECT_EQ(p.pending(), 2U);
    const auto arr = boost::json::parse(p.json()).as_array();
    ASSERT_EQ(arr.size(), 2U);
    EXPECT_EQ(arr[0].at("request_id").as_string(), "r1"); // by id
    EXPECT_EQ(arr[1].at("tool_name").as_string(), "Edit");
    EXPECT_EQ(p.first_pending(), "r1");
    EXPECT_FALSE(p.refuse_answer("r2").has_value());
}

TEST(PermissionPrompts, ALateAnswerLearnsHowAndByWhomAnUnknownOneIsNotFound) {
    PermissionPrompts p;
    p.note(ask("r1"));
    EXPECT_TRUE(p.note(resolved("r1", Behavior::deny, "cli")));
    EXPECT_EQ(p.json(), "[]");
    EXPECT_FALSE(p.first_pending().has_value());
    auto late = p.refuse_answer("r1");
    ASSERT_TRUE(late.has_value());
    EXPECT_EQ(late->code, make_error_code(errc::conflict));
    EXPECT_EQ(late->message, "that prompt was already answered: deny by cli");
    auto unknown = p.refuse_answer("nope");
    ASSERT_TRUE(unknown.has_value());
    EXPECT_EQ(unknown->code, make_error_code(errc::not_found));
    // A resolution of nothing pending, an empty id, another event: nothing changes.
    EXPECT_FALSE(p.note(resolved("r9", Behavior::allow, "api")));
    EXPECT_FALSE(p.note(ask("")));
    EXPECT_FALSE(p.note(runtime::SessionStateChanged{}));
}

TEST(PermissionPrompts, OnlyTheNewestResolvedAreRememberedAndAResetForgetsThePending) {
    PermissionPrompts p;
    for (std::size_t i = 0; i <= RESOLVED_PERMISSIONS_KEPT; ++i) {
        const auto id = "r" + std::to_string(i);
        p.note(ask(id));
        p.note(resolved(id, Behavior::allow, "api"));
    }
    EXPECT_EQ(p.refuse_answer("r0")->code, make_error_code(errc::not_found)); // forgotten
    EXPECT_EQ(p.refuse_answer("r1")->code, make_error_code(errc::conflict));
    p.note(ask("open"));
    p.forget_pending();
    EXPECT_EQ(p.json(), "[]");
    EXPECT_EQ(p.pending(), 0U);
    EXPECT_EQ(p.refuse_answer("r5")->code, make_error_code(errc::conflict)); // still known
}

} // namespace
} // namespace sluice::hub
