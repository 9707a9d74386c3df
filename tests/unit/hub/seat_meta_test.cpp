// Unit tests of hub/seat_meta.hpp: SeatSpec ↔ meta.json, and a clear reason for a damaged file.
#include "unit/hub/hub_test_support.hpp"

#include <sluice/hub/seat_meta.hpp>

#include <gtest/gtest.h>

namespace sluice::hub {
namespace {

SeatSpec sample() {
    SeatSpec s;
    s.id = "s-abc";
    s.name = "a \"name\"";
    s.agent = "process";
    s.model = "m";
    s.system = "be brief\n";
    s.epoch = "e-1";
    s.turns = 42;
    return s;
}

TEST(SeatMeta, EncodesOneCompactObjectAndANewline) {
    EXPECT_EQ(
        encode_meta(sample()),
        R"({"id":"s-abc","name":"a \"name\"","agent":"process","model":"m",)"
        R"("system":"be brief\n","epoch":"e-1","turns":42,"published":0,"unsynced":false})"
        "\n");
}

TEST(SeatMeta, RoundTripsThroughTheFile) {
    test::TempDir dir;
    ASSERT_TRUE(write_meta(dir.path(), sample()).has_value());
    auto back = read_meta(dir.path());
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->id, "s-abc");
    EXPECT_EQ(back->name, "a \"name\"");
    EXPECT_EQ(back->agent, "process");
    EXPECT_EQ(back->system, "be brief\n");
    EXPECT_EQ(back->epoch, "e-1");
    EXPECT_EQ(back->turns, 42U);
    EXPECT_FALSE(back->unsynced);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "meta.json.tmp"));
}

TEST(SeatMeta, KeepsAClaudeSeatsCwdModeAndSession) {
    SeatSpec s = sample();
    s.agent = "claude";
    s.cwd = "/w/p";
    s.permission_mode = "acceptEdits";
    s.session_id = "8d1f";
    auto back = decode_meta(encode_meta(s));
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->agent, "claude");
    EXPECT_EQ(back->cwd, "/w/p");
    EXPECT_EQ(back->permission_mode, "acceptEdits");
    EXPECT_EQ(back->session_id, "8d1f");
    EXPECT_EQ(encode_meta(sample()).find("session_id"), std::string::npos) << "only when set";
}

TEST(SeatMeta, ReadsAMissingAgentAsBuiltin) {
    auto spec = decode_meta(R"({"id":"s-1","epoch":"e-1"})");
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(spec->agent, "builtin");
    EXPECT_EQ(spec->turns, 0U);
}

TEST(SeatMeta, NamesWhatIsWrongWithADamagedFile) {
    struct Row {
        const char* text;
        const char* reason;
    };

    const std::vector<Row> rows{
        {R"({"id":"s-1","epoch":)", "not JSON"},
        {"[1,2]", "not a JSON object"},
        {R"({"epoch":"e-1"})", "'id' is missing or not a valid id"},
        {R"({"id":"../x","epoch":"e-1"})", "'id' is missing or not a valid id"},
        {R"({"id":"s-1"})", "'epoch' is missing"},
        {R"({"id":"s-1","epoch":"e","turns":-3})", "'turns' is not a count"},
        {R"({"id":"s-1","epoch":"e","name":7})", "'name' is not a string"},
        {R"({"id":"s-1","epoch":"e","published":"x"})", "'published' is not a count"},
        {R"({"id":"s-1","epoch":"e","unsynced":1})", "'unsynced' is not a boolean"},
    };
    for (const auto& r : rows) {
        auto spec = decode_meta(r.text);
        ASSERT_FALSE(spec.has_value()) << r.text;
        EXPECT_EQ(spec.error().code, make_error_code(errc::corrupt_data)) << r.text;
        EXPECT_NE(spec.error().message.find(r.reason), std::string::npos) << spec.error().message;
    }
}

TEST(SeatMeta, ReadErrorsNameTheFile) {
    test::TempDir dir;
    auto missing = read_meta(dir.path());
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code, make_error_code(errc::io_error));
    EXPECT_NE(missing.error().message.find("meta.json"), std::string::npos);
    EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
    std::ofstream(dir.path() / "meta.json") << "{torn";
    auto damaged = read_meta(dir.path());
    ASSERT_FALSE(damaged.has_value());
    EXPECT_NE(damaged.error().message.find("is damaged: not JSON"), std::string::npos)
        << damaged.error().message;
}

TEST(SeatMeta, WriteErrorsCarryTheOsReason) {
    test::TempDir dir;
    auto r = write_meta(dir.path() / "gone", sample());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, make_error_code(errc::io_error));
    EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos)
        << r.error().message;
}

TEST(SeatMeta, KeepsTheHighWaterMark) {
    test::TempDir dir;
    auto spec = sample();
    spec.published = 909;
    spec.unsynced = true;
    ASSERT_TRUE(write_meta(dir.path(), spec).has_value());
    auto back = read_meta(dir.path());
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->published, 909U);
    EXPECT_TRUE(back->unsynced);
}

TEST(SeatMeta, AFailedWriteLeavesTheOldFileWhole) {
    test::TempDir dir;
    ASSERT_TRUE(write_meta(dir.path(), sample()).has_value());
    // A directory where the temp file must go: the write fails before the rename.
    std::filesystem::create_directories(dir.path() / "meta.json.tmp" / "x");
    auto spec = sample();
    spec.turns = 43;
    ASSERT_FALSE(write_meta(dir.path(), spec).has_value());
    auto back = read_meta(dir.path());
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->turns, 42U);
}

TEST(SeatMeta, KeepsTheBudgetAndWhatWasSpent) {
    auto s = sample();
    s.budget_usd = 2.5;
    s.spend = SeatSpend{1.25, "2026-12-06", 0.5};
    s.budget_left = 9; // not kept: asked of the limits when the agent is made
    const auto text = encode_meta(s);
    EXPECT_NE(text.find(R"("budget_usd":2.5E0)"), std::string::npos) << text;
    EXPECT_EQ(text.find("budget_left"), std::string::npos) << text;
    auto back = decode_meta(text);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->budget_usd, 2.5);
    EXPECT_EQ(back->spend.total_usd, 1.25);
    EXPECT_EQ(back->spend.day, "2026-12-06");
    EXPECT_EQ(back->spend.day_usd, 0.5);
    EXPECT_FALSE(back->budget_left);
    // A file from before budgets: none, nothing spent.
    auto old = decode_meta(encode_meta(sample()));
    ASSERT_TRUE(old.has_value());
    EXPECT_FALSE(old->budget_usd);
    EXPECT_EQ(old->spend.total_usd, 0);
    // Damaged figures are named.
    auto bad = decode_meta(R"({"id":"s-abc","epoch":"e","budget_usd":"lots"})");
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().message, "'budget_usd' is not an amount");
    bad =
        decode_meta(R"({"id":"s-abc","epoch":"e","spend":{"total_usd":-1,"day":"","day_usd":0}})");
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().message, "'spend' is not {total_usd, day, day_usd}");
}

} // namespace
} // namespace sluice::hub
