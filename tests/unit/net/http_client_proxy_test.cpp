// Tests of the HTTP client through a proxy: absolute form through a plain HTTP proxy, CONNECT
// tunnels for HTTPS, NO_PROXY matching and the proxy environment.
#include "support/stub_provider.hpp"
#include "unit/net/http_client_helpers.hpp"

#include <sluice/core/error.hpp>
#include <sluice/net/http_client.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace sluice;
using test::fast_options;
using test::request;

TEST(HttpClient, SendsAbsoluteFormThroughAPlainHttpProxy) {
    test::StubProvider proxy;
    proxy.enqueue({.body = "data: via proxy\n\n"});
    auto options = fast_options();
    options.proxy = "http://user:pw@127.0.0.1:" + std::to_string(proxy.port());
    transport::HttpClient client(options);
    std::string got;
    const auto r =
        request(client, {.url = "http://api.example.invalid/v1/chat"}, {}, [&](std::string_view c) {
            got += c;
            return true;
        });
    ASSERT_TRUE(r) << client.error_message();
    EXPECT_EQ(got, "data: via proxy\n\n");
    const auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].target, "http://api.example.invalid/v1/chat");
    EXPECT_EQ(reqs[0].header("host"), "api.example.invalid");
    EXPECT_EQ(reqs[0].header("proxy-authorization"), "Basic dXNlcjpwdw==");
}

TEST(HttpClient, TunnelsHttpsThroughConnectAndReportsARefusal) {
    test::StubProvider proxy;
    proxy.enqueue({.status = 403, .body = "no", .content_length = true});
    auto options = fast_options();
    options.proxy = proxy.base_url();
    transport::HttpClient client(options);
    const auto r = request(
        client, {.url = "https://api.example.invalid/v1/messages"}, {}, [](std::string_view) {
            return true;
        });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::protocol_error);
    EXPECT_NE(
        client.error_message().find("refused CONNECT api.example.invalid:443"), std::string::npos)
        << client.error_message();
    const auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1U);
    EXPECT_EQ(reqs[0].method, "CONNECT");
    EXPECT_EQ(reqs[0].target, "api.example.invalid:443");
}

TEST(HttpClient, MatchesNoProxyEntries) {
    struct Row {
        const char* no_proxy;
        const char* host;
        bool excluded;
    };

    const Row rows[] = {
        {"", "api.openai.com", false},
        {"*", "api.openai.com", true},
        {"localhost,127.0.0.1", "127.0.0.1", true},
        {"example.com", "api.example.com", true},
        {".example.com", "api.example.com", true},
        {"example.com", "badexample.com", false},
        {" openai.com:443 , x", "api.openai.com", true},
        {"anthropic.com", "api.openai.com", false},
    };
    for (const auto& row : rows) {
        EXPECT_EQ(transport::no_proxy_matches(row.no_proxy, row.host), row.excluded)
            << row.no_proxy << " / " << row.host;
    }
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
public:
    ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const auto& [k, v] : vars) {
            const char* old = std::getenv(k); // NOLINT(concurrency-mt-unsafe)
            saved_.emplace_back(k, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
            ::setenv(k, v, 1); // NOLINT(concurrency-mt-unsafe)
        }
    }

    ~ScopedEnv() {
        for (const auto& [k, v] : saved_) {
            if (v) {
                ::setenv(k.c_str(), v->c_str(), 1); // NOLINT(concurrency-mt-unsafe)
            } else {
                ::unsetenv(k.c_str()); // NOLINT(concurrency-mt-unsafe)
            }
        }
    }

    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(HttpClient, HonoursTheProxyEnvironmentAndNoProxy) {
    test::StubProvider proxy;
    test::StubProvider direct;
    proxy.enqueue({.body = "data: proxied\n\n"});
    direct.enqueue({.body = "data: direct\n\n"});
    const ScopedEnv env{
        {"HTTP_PROXY", proxy.base_url().c_str()},
        {"http_proxy", proxy.base_url().c_str()},
        {"NO_PROXY", "127.0.0.1"},
        {"no_proxy", "127.0.0.1"}};
    auto options = fast_options();
    options.proxy.reset(); // from the environment
    transport::HttpClient client(options);
    std::string got;
    const auto sink = [&](std::string_view c) {
        got += c;
        return true;
    };
    ASSERT_TRUE(client.request_blocking({.url = "http://api.example.invalid/v1"}, {}, sink))
        << client.error_message();
    EXPECT_EQ(got, "data: proxied\n\n");
    got.clear();
    ASSERT_TRUE(client.request_blocking({.url = direct.base_url() + "/v1"}, {}, sink))
        << client.error_message();
    EXPECT_EQ(got, "data: direct\n\n");
    ASSERT_EQ(proxy.request_count(), 1U);
    EXPECT_EQ(proxy.requests()[0].target, "http://api.example.invalid/v1");
    EXPECT_EQ(direct.request_count(), 1U);
}

} // namespace
