// Tokens: digests, the owner token file, the viewer store, the keyring.
#include "unit/conversation/fixtures.hpp"

#include <sluice/server/auth.hpp>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace {

using namespace sluice::server::auth;
using namespace std::chrono_literals;
using sluice::test::TempDir;

TEST(Auth, RandomTokensAre256BitsOfHex) {
    const auto a = random_token();
    const auto b = random_token();
    EXPECT_EQ(a.size(), 64U);
    EXPECT_NE(a, b);
    EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Auth, DigestsCompareEqualOnlyWhenEqual) {
    EXPECT_TRUE(digest_equal(digest("abc"), digest("abc")));
    EXPECT_FALSE(digest_equal(digest("abc"), digest("abd")));
    EXPECT_FALSE(digest_equal(digest("abc"), digest("abc ")));
    EXPECT_FALSE(digest_equal(digest(""), digest("a")));
}

TEST(Auth, TheOwnerTokenIsCreatedOnceAtMode0600) {
    TempDir dir;
    bool created = false;
    auto t = owner_token(dir.path(), created);
    ASSERT_TRUE(t);
    EXPECT_TRUE(created);

    struct stat st {};

    ASSERT_EQ(::stat((std::filesystem::path(dir.path()) / "token").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777U, 0600U);
    auto again = owner_token(dir.path(), created);
    ASSERT_TRUE(again);
    EXPECT_FALSE(created);
    EXPECT_EQ(*again, *t);
    EXPECT_EQ(read_owner_token(dir.path()), *t);
    EXPECT_FALSE(read_owner_token(std::filesystem::path(dir.path()) / "nowhere"));
}

TEST(Auth, DurationsParse) {
    EXPECT_EQ(parse_duration("24h"), 86400s);
    EXPECT_EQ(parse_duration("90m"), 5400s);
    EXPECT_EQ(parse_duration("7d"), 604800s);
    EXPECT_EQ(parse_duration("1s"), 1s);
    for (const char* bad : {"", "h", "0h", "-1h", "1", "1w", "1.5h", "h1", "99999999999999h"}) {
        EXPECT_FALSE(parse_duration(bad)) << bad;
    }
}

TEST(Keyring, GrantsOwnerViewerAndRefusesExpiredOrRevoked) {
    TempDir dir;
    Keyring ring("owner-token", dir.path());
    EXPECT_TRUE(ring.required());
    EXPECT_EQ(ring.check("owner-token", 100).grant->role, Role::owner);
    EXPECT_FALSE(ring.check("owner-toke", 100).grant);
    EXPECT_FALSE(ring.check("", 100).grant);

    auto v = mint_viewer(dir.path(), "seat1", 0s);
    ASSERT_TRUE(v);
    auto brief = mint_viewer(dir.path(), "", 10s);
    ASSERT_TRUE(brief);
    const auto now = brief->entry.created;
    auto g = ring.check(v->token, now).grant;
    ASSERT_TRUE(g);
    EXPECT_EQ(g->role, Role::viewer);
    EXPECT_EQ(g->seat, "seat1");
    EXPECT_TRUE(ring.check(brief->token, now + 9).grant);
    auto expired = ring.check(brief->token, now + 10);
    EXPECT_FALSE(expired.grant);
    EXPECT_NE(expired.why.find("expired"), std::string::npos);

    // Stored hashed, never the token.
    std::ifstream in(std::filesystem::path(dir.path()) / "tokens.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find(v->token), std::string::npos);

    EXPECT_FALSE(*revoke_viewer(dir.path(), "zzzzzzzz"));
    EXPECT_TRUE(*revoke_viewer(dir.path(), v->entry.id));
    EXPECT_FALSE(ring.check(v->token, now).grant);
    EXPECT_TRUE(ring.check(brief->token, now).grant);
    ASSERT_EQ(read_viewers(dir.path())->size(), 1U);
}

TEST(Keyring, WithNoOwnerTokenEverythingIsOpen) {
    Keyring ring("", {});
    EXPECT_FALSE(ring.required());
    EXPECT_EQ(ring.check("anything", 0).grant->role, Role::owner);
}

} // namespace
