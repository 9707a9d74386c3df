// Host and Origin checks, the JSON rule, URL redaction and the wrong-token backoff, table-tested.
#include <sluice/server/access.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice::server::access;
using namespace std::chrono_literals;

TEST(Access, HostAllowListTakesTheHubsOwnNamesOnly) {
    const auto names = site_names("127.0.0.1", {"hub.lan"}, {}, "https://sluice.example.org/x");

    struct Row {
        const char* host;
        bool ok;
    };

    const Row rows[] = {
        {"", true}, // HTTP/1.0 tools; a browser always sends one
        {"127.0.0.1", true},
        {"127.0.0.1:8420", true},
        {"LOCALHOST:1", true},
        {"[::1]:8420", true},
        {"hub.lan", true},
        {"sluice.example.org", true},
        {"evil.example", false},
        {"evil.example:8420", false},
        {"127.0.0.1.evil.example", false},
        {"localhost.", false},
        {"127.0.0.2", false},
        {"[::1", false},
        {"::1", false},
        {"localhost:99999999", false},
        {"local host", false},
        {"localhost:80a", false},
    };
    for (const auto& r : rows) {
        EXPECT_EQ(host_allowed(names, r.host), r.ok) << r.host;
    }
    const auto wide = site_names("0.0.0.0", {}, {}, "");
    EXPECT_TRUE(host_allowed(wide, "192.168.1.9:8420"));
    EXPECT_FALSE(host_allowed(wide, "evil.example:8420"));
}

TEST(Access, OriginMustBeTheHubsOwnOrListed) {
    const auto names = site_names("127.0.0.1", {}, {"https://app.example"}, "");

    struct Row {
        const char* origin;
        const char* host;
        bool ok;
    };

    const Row rows[] = {
        {"http://127.0.0.1:8420", "127.0.0.1:8420", true},
        {"http://LOCALHOST:8420", "localhost:8420", true},
        {"http://localhost", "localhost:80", true},
        {"https://localhost:443", "localhost", false}, // this hub speaks http
        {"https://127.0.0.1:8420", "127.0.0.1:8420", false},
        {"http://127.0.0.1:8421", "127.0.0.1:8420", false},
        {"http://evil.example", "127.0.0.1:8420", false},
        {"null", "127.0.0.1:8420", false},
        {"", "127.0.0.1:8420", false},
        {"file://", "127.0.0.1:8420", false},
        {"https://app.example", "127.0.0.1:8420", true},
        {"https://app.example:444", "127.0.0.1:8420", false},
        {"http://127.0.0.1:8420", "", false},
    };
    for (const auto& r : rows) {
        EXPECT_EQ(origin_allowed(names, r.origin, r.host, "http"), r.ok)
            << r.origin << " / " << r.host;
    }
    EXPECT_TRUE(
        origin_allowed(site_names("127.0.0.1", {}, {"*"}, ""), "http://x.example", "h", "http"));
    // A hub that speaks https (TLS, or a TLS proxy in front) owns the https origin only.
    EXPECT_TRUE(origin_allowed(names, "https://localhost:443", "localhost", "https"));
    EXPECT_TRUE(origin_allowed(names, "https://hub.example", "hub.example", "https"));
    EXPECT_FALSE(origin_allowed(names, "http://hub.example", "hub.example", "https"));
    EXPECT_TRUE(origin_allowed(names, "https://app.example", "127.0.0.1:8420", "https"));
}

TEST(Access, LoopbackPeersAreLoopback) {
    for (const char* p : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"}) {
        EXPECT_TRUE(is_loopback_peer(p)) << p;
    }
    for (const char* p :
         {"",
          "10.0.0.1",
          "128.0.0.1",
          "::2",
          "::ffff:10.0.0.1",
          "127.",
          "127.0.0.1:1",
          "fe80::1"}) {
        EXPECT_FALSE(is_loopback_peer(p)) << p;
    }
}

TEST(Access, XForwardedProtoIsTrustedBehindAProxyFromLoopbackOnly) {
    EXPECT_EQ(own_scheme(false, true, "127.0.0.1", "https"), "https");
    EXPECT_EQ(own_scheme(false, true, "::1", "HTTPS"), "https");
    EXPECT_EQ(own_scheme(false, true, "::ffff:127.0.0.1", " https "), "https");
    // The last value is the one the proxy in front wrote; a client may have sent the first.
    EXPECT_EQ(own_scheme(false, true, "127.0.0.1", "http, https"), "https");
    EXPECT_EQ(own_scheme(false, true, "127.0.0.1", "https, http"), "http");
    EXPECT_EQ(own_scheme(false, true, "127.0.0.1", ""), "http");
    // Ignored without --behind-proxy, and from any peer that is not loopback.
    EXPECT_EQ(own_scheme(false, false, "127.0.0.1", "https"), "http");
    EXPECT_EQ(own_scheme(false, true, "192.168.1.9", "https"), "http");
    EXPECT_EQ(own_scheme(false, true, "", "https"), "http");
    // A TLS hub speaks https whatever the header says.
    EXPECT_EQ(own_scheme(true, false, "10.0.0.1", "http"), "https");
}

TEST(Access, OnlyJsonIsJson) {
    EXPECT_TRUE(is_json("application/json"));
    EXPECT_TRUE(is_json("Application/JSON; charset=utf-8"));
    EXPECT_FALSE(is_json("text/plain"));
    EXPECT_FALSE(is_json("application/x-www-form-urlencoded"));
    EXPECT_FALSE(is_json("multipart/form-data; boundary=x"));
    EXPECT_FALSE(is_json(""));
    EXPECT_FALSE(is_json("application/jsonx"));
}

TEST(Access, RedactTargetHidesEveryAccessToken) {
    EXPECT_EQ(redact_target("/v1/seats"), "/v1/seats");
    EXPECT_EQ(redact_target("/e?access_token=abc"), "/e?access_token=REDACTED");
    EXPECT_EQ(
        redact_target("/e?last_event_id=1:2&access_token=abc&access_token=d&x"),
        "/e?last_event_id=1:2&access_token=REDACTED&access_token=REDACTED&x");
    EXPECT_EQ(redact_target("/e?access_tokenx=abc"), "/e?access_tokenx=abc");
}

TEST(Backoff, HoldsAPeerBackForAGrowingIntervalAfterItsFreeFailures) {
    Backoff b(BackoffLimits{.free_failures = 2, .first = 1s, .longest = 4s, .forget = 60s});
    const auto t0 = Backoff::Clock::time_point{} + 1000s;
    EXPECT_FALSE(b.failed("a", t0));
    EXPECT_FALSE(b.failed("a", t0));
    EXPECT_FALSE(b.held("a", t0));
    EXPECT_EQ(b.failed("a", t0), 1s);
    EXPECT_EQ(b.held("a", t0), 1s);
    EXPECT_FALSE(b.held("b", t0)); // per peer
    EXPECT_FALSE(b.held("a", t0 + 1s));
    EXPECT_EQ(b.failed("a", t0 + 1s), 2s);
    EXPECT_EQ(b.held("a", t0 + 1500ms), 2s); // rounded up
    EXPECT_EQ(b.failed("a", t0 + 3s), 4s);
    EXPECT_EQ(b.failed("a", t0 + 7s), 4s); // stops growing
    // Quiet for longer than `forget`: a fresh start.
    EXPECT_FALSE(b.failed("a", t0 + 200s));
}

TEST(Backoff, TracksABoundedNumberOfPeers) {
    Backoff b(BackoffLimits{.free_failures = 0, .max_peers = 3});
    const auto t0 = Backoff::Clock::time_point{} + 1000s;
    for (int i = 0; i < 10; ++i) {
        (void)b.failed("p" + std::to_string(i), t0 + std::chrono::seconds(i));
    }
    EXPECT_EQ(b.peers(), 3U);
    EXPECT_TRUE(b.held("p9", t0 + 9s));
    EXPECT_FALSE(b.held("p0", t0 + 9s)); // the stalest was forgotten
}

} // namespace
