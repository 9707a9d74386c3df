// Tests of the RESP encoder, the reply reader (hiredis's) and Redis URL parsing: pure, no I/O.
#include <sluice/redis/resp.hpp>

#include <gtest/gtest.h>

namespace sluice::redis {
namespace {

TEST(RespEncode, WritesAnArrayOfBulkStrings) {
    std::string out;
    append_command(out, {"SET", "k", std::string("a\r\nb", 4), ""});
    EXPECT_EQ(out, "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n$0\r\n\r\n");
}

TEST(ReplyReader, AssemblesRepliesAcrossFeeds) {
    ReplyReader r;
    const std::string bytes =
        "+OK\r\n:42\r\n$5\r\nhello\r\n*2\r\n$1\r\na\r\n*-1\r\n-ERR no\r\n$-1\r\n";
    // Byte by byte: every reply comes out whole, in order.
    std::vector<Reply> got;
    for (char c : bytes) {
        ASSERT_TRUE(r.feed(std::string_view(&c, 1)));
        while (auto rep = r.next()) {
            got.push_back(std::move(*rep));
        }
    }
    ASSERT_EQ(got.size(), 6U);
    EXPECT_EQ(got[0].type, Reply::Type::status);
    EXPECT_EQ(got[0].str, "OK");
    EXPECT_EQ(got[1].integer, 42);
    EXPECT_EQ(got[2].str, "hello");
    ASSERT_EQ(got[3].elements.size(), 2U);
    EXPECT_EQ(got[3].elements[0].str, "a");
    EXPECT_TRUE(got[3].elements[1].is_nil());
    EXPECT_TRUE(got[4].is_error());
    EXPECT_EQ(got[4].str, "ERR no");
    EXPECT_TRUE(got[5].is_nil());
}

TEST(ReplyReader, FailsOnGarbage) {
    ReplyReader r;
    r.feed("HTTP/1.1 200 OK\r\n");
    EXPECT_FALSE(r.next());
    EXPECT_TRUE(r.failed());
}

TEST(RedisUrl, ParsesTcpUnixAndTls) {
    auto a = parse_url("redis://127.0.0.1:6380/2");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->kind, Url::Kind::tcp);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 6380);
    EXPECT_EQ(a->db, 2U);
    auto b = parse_url("redis://:secret@example");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->password, "secret");
    EXPECT_EQ(b->port, 6379);
    EXPECT_EQ(b->display(), "redis://example:6379"); // never the password
    auto c = parse_url("unix:///run/redis.sock");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, Url::Kind::unix_socket);
    EXPECT_EQ(c->path, "/run/redis.sock");
    auto d = parse_url("rediss://[::1]:7000");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->kind, Url::Kind::tls);
    EXPECT_EQ(d->host, "::1");
    EXPECT_EQ(d->port, 7000);
}

TEST(RedisUrl, RefusesWhatIsNotOne) {
    EXPECT_FALSE(parse_url("http://x"));
    EXPECT_FALSE(parse_url("redis://"));
    EXPECT_FALSE(parse_url("redis://h:0"));
    EXPECT_FALSE(parse_url("redis://h:99999"));
    EXPECT_FALSE(parse_url("unix://relative"));
    EXPECT_EQ(
        parse_url("ftp://x").error(), "a Redis URL starts with redis://, rediss:// or unix://");
}

} // namespace
} // namespace sluice::redis
