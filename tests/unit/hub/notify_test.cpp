// Unit tests of hub/notify.hpp: a waiting prompt's notice (its tool, id and a summary of its
// input, shortened at a character boundary) and the kinds' wire names.
#include <sluice/hub/notify.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice;

runtime::PermissionRequest ask(boost::json::value input) {
    runtime::PermissionRequest a;
    a.request_id = "h-1";
    a.tool_name = "Bash";
    a.input = std::move(input);
    return a;
}

TEST(Notice, APromptsNoticeNamesItsToolIdAndCommand) {
    const auto n = hub::permission_notice(ask(boost::json::object{{"command", "rm -rf build"}}));
    EXPECT_EQ(n.kind, hub::Notice::Kind::permission);
    EXPECT_EQ(n.tool, "Bash");
    EXPECT_EQ(n.request_id, "h-1");
    EXPECT_EQ(n.summary, "rm -rf build");
}

TEST(Notice, WithoutACommandTheSummaryIsAFilePathOrTheInput) {
    EXPECT_EQ(
        hub::permission_notice(ask(boost::json::object{{"file_path", "/a/b.txt"}, {"x", 1}}))
            .summary,
        "/a/b.txt");
    EXPECT_EQ(hub::permission_notice(ask(boost::json::object{{"x", 1}})).summary, R"({"x":1})");
    EXPECT_EQ(hub::permission_notice(ask(nullptr)).summary, "");
}

TEST(Notice, ALongSummaryIsCutAtACharacterBoundary) {
    std::string text;
    while (text.size() < 2 * hub::NOTICE_SUMMARY_MAX_BYTES) {
        text += "é"; // two bytes each
    }
    const auto n = hub::permission_notice(ask(boost::json::object{{"command", text}}));
    EXPECT_LE(n.summary.size(), hub::NOTICE_SUMMARY_MAX_BYTES);
    EXPECT_EQ(n.summary.substr(n.summary.size() - 3), "...");
    const auto body = n.summary.substr(0, n.summary.size() - 3);
    EXPECT_EQ(body.size() % 2, 0U); // whole characters only
}

TEST(Notice, KindsHaveWireNames) {
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::permission), "permission");
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::turn_ended), "turn_ended");
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::turn_failed), "turn_failed");
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::degraded), "degraded");
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::test), "test");
    EXPECT_STREQ(hub::kind_name(hub::Notice::Kind::budget), "budget");
}

} // namespace
