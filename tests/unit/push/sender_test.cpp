// Unit tests of push/sender.hpp over real loopback sockets: webhooks (JSON signed with
// HMAC-SHA256, ntfy's form, a retry after a 500), Web Push (decrypted with the browser's keys,
// VAPID checked, 410 removing the subscription, kept across a reopen), the bounded queue and a
// stop while a delivery hangs.
#include "support/push_service.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/push/sender.hpp>

#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace {

using namespace sluice;
using namespace std::chrono_literals;
using sluice::test::TempDir;
namespace json = boost::json;

hub::Notice prompt_notice(const std::string& seat = "s-1") {
    hub::Notice n;
    n.kind = hub::Notice::Kind::permission;
    n.seat = seat;
    n.title = "build";
    n.tool = "Bash";
    n.summary = "rm -rf build";
    n.request_id = "h-1";
    return n;
}

push::SenderConfig config(const TempDir& dir) {
    push::SenderConfig c;
    c.data_dir = dir.path();
    c.backoff_initial = 50ms;
    c.timeout = 2'000ms;
    return c;
}

push::Subscription subscribe(
    push::NotifySender& s,
    const test::BrowserKeys& ua,
    const std::string& endpoint,
    std::string seat = {}) {
    push::Subscription sub;
    EXPECT_TRUE(push::check_subscription(
        endpoint, push::base64url(ua.key.public_point()), push::base64url(ua.auth), sub));
    sub.seat = std::move(seat);
    auto stored = s.async_subscribe(sub, boost::asio::use_future).get();
    EXPECT_TRUE(stored);
    return stored ? *stored : sub;
}

TEST(NotifySender, WebhookBodyIsSignedJson) {
    TempDir dir;
    test::LoopbackReceiver hook;
    auto c = config(dir);
    c.webhook_urls = {hook.url("/hook")};
    c.webhook_secret = "s3cret";
    auto sender = push::NotifySender::open(c).value();
    sender->notify(prompt_notice());
    ASSERT_TRUE(hook.wait_for(1));
    const auto r = hook.received().at(0);
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hook");
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.header("x-sluice-signature"), "sha256=" + push::hmac_sha256_hex("s3cret", r.body));
    const auto body = json::parse(r.body);
    EXPECT_EQ(body.at("kind"), "permission");
    EXPECT_EQ(body.at("seat"), "s-1");
    EXPECT_EQ(body.at("tool"), "Bash");
    EXPECT_EQ(body.at("summary"), "rm -rf build");
    EXPECT_EQ(body.at("request_id"), "h-1");
    EXPECT_EQ(body.at("url"), "/#/seat/s-1");
    for (int i = 0; i < 100 && sender->stats().sent == 0; ++i) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(sender->stats().sent, 1U);
}

TEST(NotifySender, AWebhookIsRetriedAfterA500) {
    TempDir dir;
    test::LoopbackReceiver hook;
    hook.script({500});
    auto c = config(dir);
    c.webhook_urls = {hook.url("/hook")};
    auto sender = push::NotifySender::open(c).value();
    sender->notify(prompt_notice());
    ASSERT_TRUE(hook.wait_for(2));
    const auto got = hook.received();
    EXPECT_EQ(got.at(0).body, got.at(1).body);
    for (int i = 0; i < 100 && sender->stats().sent == 0; ++i) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(sender->stats().sent, 1U);
    EXPECT_EQ(sender->stats().failed, 0U);
}

TEST(NotifySender, NtfyFormIsTextWithTitleTagsPriorityAndClick) {
    TempDir dir;
    test::LoopbackReceiver hook;
    auto c = config(dir);
    c.webhook_urls = {hook.url("/sluice")};
    c.ntfy = true;
    c.public_url = "https://hub.example.org/";
    auto sender = push::NotifySender::open(c).value();
    sender->notify(prompt_notice());
    ASSERT_TRUE(hook.wait_for(1));
    const auto r = hook.received().at(0);
    EXPECT_EQ(r.body, "rm -rf build");
    EXPECT_EQ(r.header("title"), "build: allow Bash?");
    EXPECT_EQ(r.header("tags"), "lock");
    EXPECT_EQ(r.header("priority"), "4");
    EXPECT_EQ(r.header("click"), "https://hub.example.org/#/seat/s-1");
    EXPECT_EQ(r.header("content-type").rfind("text/plain", 0), 0U);
}

TEST(NotifySender, PushIsEncryptedForTheBrowserAndSignedWithVapid) {
    TempDir dir;
    test::LoopbackReceiver service;
    auto sender = push::NotifySender::open(config(dir)).value();
    const auto ua = test::BrowserKeys::make();
    subscribe(*sender, ua, service.url("/push/abc"));
    sender->notify(prompt_notice());
    ASSERT_TRUE(service.wait_for(1));
    const auto r = service.received().at(0);
    EXPECT_EQ(r.header("content-encoding"), "aes128gcm");
    EXPECT_EQ(r.header("urgency"), "high");
    EXPECT_EQ(r.header("topic"), "s-1");
    EXPECT_FALSE(r.header("ttl").empty());
    EXPECT_EQ(
        test::check_vapid(r.header("authorization"), sender->public_key(), service.url("")), "");
    std::string why;
    const auto text = test::decrypt_push(r.body, ua, &why);
    ASSERT_TRUE(text) << why;
    EXPECT_EQ(json::parse(*text).at("request_id"), "h-1");
}

TEST(NotifySender, A410RemovesTheSubscriptionAndAReopenKeepsTheRest) {
    TempDir dir;
    test::LoopbackReceiver gone;
    test::LoopbackReceiver fine;
    gone.default_status(410);
    {
        auto sender = push::NotifySender::open(config(dir)).value();
        subscribe(*sender, test::BrowserKeys::make(), gone.url("/p/1"));
        subscribe(*sender, test::BrowserKeys::make(), fine.url("/p/2"));
        EXPECT_EQ(sender->stats().subscriptions, 2U);
        sender->notify(prompt_notice());
        ASSERT_TRUE(gone.wait_for(1));
        ASSERT_TRUE(fine.wait_for(1));
        for (int i = 0; i < 100 && sender->stats().removed == 0; ++i) {
            std::this_thread::sleep_for(20ms);
        }
        EXPECT_EQ(sender->stats().removed, 1U);
        EXPECT_EQ(gone.received().size(), 1U); // a 410 is not retried
    }
    auto again = push::NotifySender::open(config(dir)).value();
    const auto kept = again->subscriptions("", true);
    ASSERT_EQ(kept.size(), 1U);
    EXPECT_EQ(kept[0].endpoint, fine.url("/p/2"));
}

TEST(NotifySender, ASeatScopedSubscriptionHearsOnlyOfItsSeat) {
    TempDir dir;
    test::LoopbackReceiver service;
    auto sender = push::NotifySender::open(config(dir)).value();
    subscribe(*sender, test::BrowserKeys::make(), service.url("/p/1"), "s-mine");
    sender->notify(prompt_notice("s-other"));
    sender->notify(prompt_notice("s-mine"));
    ASSERT_TRUE(service.wait_for(1));
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(service.received().size(), 1U);
}

TEST(NotifySender, AFullQueueDropsAndCountsAndStopEndsAHangingDelivery) {
    TempDir dir;
    test::LoopbackReceiver hook;
    hook.hang(true);
    auto c = config(dir);
    c.webhook_urls = {hook.url("/hook")};
    c.queue_capacity = 2;
    c.concurrency = 1;
    c.timeout = 30'000ms;
    auto sender = push::NotifySender::open(c).value();
    sender->notify(prompt_notice()); // in flight, hanging
    ASSERT_TRUE(hook.wait_for(1));
    for (int i = 0; i < 5; ++i) {
        sender->notify(prompt_notice()); // two queued, three dropped
    }
    EXPECT_EQ(sender->stats().dropped, 3U);
    const auto start = std::chrono::steady_clock::now();
    sender->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_NE(
        push::metrics_text(sender->stats()).find("sluice_push_dropped_total 3"), std::string::npos);
}

TEST(NotifySender, RefusesABrowserSubscriptionWithBadKeys) {
    push::Subscription sub;
    const auto ua = test::BrowserKeys::make();
    const auto p = push::base64url(ua.key.public_point());
    const auto a = push::base64url(ua.auth);
    EXPECT_TRUE(push::check_subscription("https://push.example/x", p, a, sub));
    EXPECT_FALSE(push::check_subscription("not a url", p, a, sub));
    EXPECT_FALSE(push::check_subscription("https://push.example/x", p.substr(2), a, sub));
    EXPECT_FALSE(push::check_subscription("https://push.example/x", p, "AAAA", sub));
    EXPECT_FALSE(push::check_subscription("https://push.example/x", "!!", a, sub));
}

} // namespace
