// End to end: Web Push and webhooks from the real `sluice serve` — a loopback push service
// written here receives each push, decrypts it with the subscription's private key (RFC 8291,
// tests/support/push_service.cpp) and checks its VAPID JWT against GET /v1/push/key; prompts come
// from a terminal session's hook (POST /v1/hooks/claude, as `sluice hook claude` sends it).
#include "support/files.hpp"
#include "support/hub_process.hpp"
#include "support/push_service.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace {

using namespace sluice::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A hub with an owner token over `dir`, `extra` flags added.
struct PushHub {
    SluiceProcess hub;
    std::string token = hub.token();

    PushHub(const TempDir& dir, std::vector<std::string> extra)
        : hub(hub_args(dir, std::move(extra)), true, HubAuth::as_given) {}

    [[nodiscard]] Reply call(
        const std::string& method,
        const std::string& path,
        const std::string& body = {},
        const std::string& as = {}) const {
        auto h = bearer(as.empty() ? token : as);
        if (!body.empty()) {
            h.emplace_back("Content-Type", "application/json");
        }
        return http(method, hub.base() + path, body, h);
    }

    // Subscribes `ua` at `endpoint` (as `as`); returns the id ("" unless 201).
    [[nodiscard]] std::string subscribe(
        const BrowserKeys& ua, const std::string& endpoint, const std::string& as = {}) const {
        const auto r = call("POST", "/v1/push/subscriptions", ua.subscription_json(endpoint), as);
        EXPECT_EQ(r.status, 201U) << r.body;
        return r.status == 201 ? std::string(r.json.at("id").as_string()) : std::string();
    }

    // A terminal session's PermissionRequest hook for session `session` (its file in `dir`)
    // asking to run `command`; returns {"seat","request_id"}.
    [[nodiscard]] json::value
    ask(const TempDir& dir, const std::string& session, const std::string& command) const {
        const fs::path file = fs::path(dir.path()) / "projects" / (session + ".jsonl");
        if (!fs::exists(file)) {
            fs::create_directories(file.parent_path());
            spill(
                file.string(),
                json::serialize(json::object{
                    {"type", "user"},
                    {"sessionId", session},
                    {"cwd", dir.path()},
                    {"uuid", "u1"},
                    {"message", {{"role", "user"}, {"content", "go"}}}})
                    + "\n");
        }
        const json::object body{
            {"event", "PermissionRequest"},
            {"input",
             {{"session_id", session},
              {"transcript_path", file.string()},
              {"cwd", dir.path()},
              {"hook_event_name", "PermissionRequest"},
              {"tool_name", "Bash"},
              {"tool_input", {{"command", command}}}}}};
        const auto r = call("POST", "/v1/hooks/claude", json::serialize(body));
        EXPECT_EQ(r.status, 200U) << r.body;
        return r.json;
    }

    [[nodiscard]] std::string public_key() const {
        const auto r = call("GET", "/v1/push/key");
        EXPECT_EQ(r.status, 200U) << r.body;
        return std::string(r.json.at("public_key").as_string());
    }
};

const std::string SESSION_A = "5b3f6a2e-1c4d-4e8f-9a0b-7c6d5e4f3a21";
const std::string SESSION_B = "6c4a7b3f-2d5e-4f90-8b1c-8d7e6f5a4b32";

TEST(Push, AWaitingPromptIsPushedOnceEncryptedForTheBrowserAndSignedWithVapid) {
    TempDir dir;
    LoopbackReceiver service;
    PushHub h(dir, {});
    const auto key = h.public_key();
    EXPECT_EQ(sluice::push::from_base64url(key).value().size(), 65U);
    const auto ua = BrowserKeys::make();
    ASSERT_FALSE(h.subscribe(ua, service.url("/push/abc")).empty());
    const auto asked = h.ask(dir, SESSION_A, "rm -rf build");
    const std::string seat(asked.at("seat").as_string());
    ASSERT_TRUE(service.wait_for(1));
    std::this_thread::sleep_for(500ms);
    const auto got = service.received();
    ASSERT_EQ(got.size(), 1U); // one push per event
    const auto& r = got[0];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/push/abc");
    EXPECT_EQ(r.header("content-encoding"), "aes128gcm");
    EXPECT_EQ(r.header("urgency"), "high");
    EXPECT_EQ(r.header("topic"), seat.substr(0, 32));
    EXPECT_EQ(check_vapid(r.header("authorization"), key, service.url("")), "");
    std::string why;
    const auto text = decrypt_push(r.body, ua, &why);
    ASSERT_TRUE(text) << why;
    const auto p = json::parse(*text);
    EXPECT_EQ(p.at("kind"), "permission");
    EXPECT_EQ(p.at("seat").as_string(), seat);
    EXPECT_EQ(p.at("tool"), "Bash");
    EXPECT_EQ(p.at("summary"), "rm -rf build");
    EXPECT_EQ(p.at("request_id"), asked.at("request_id"));
    EXPECT_EQ(p.at("url").as_string(), "/#/seat/" + seat);
    const auto metrics = h.call("GET", "/metrics").body;
    EXPECT_NE(metrics.find("sluice_push_sent_total 1"), std::string::npos) << metrics;
}

TEST(Push, SubscriptionsAreListedWithoutSecretsDeletedAndRefusedWhenBad) {
    TempDir dir;
    LoopbackReceiver service;
    PushHub h(dir, {});
    const auto ua = BrowserKeys::make();
    const auto id = h.subscribe(ua, service.url("/push/1"));
    const auto listed = h.call("GET", "/v1/push/subscriptions");
    ASSERT_EQ(listed.status, 200U);
    ASSERT_EQ(listed.json.at("subscriptions").as_array().size(), 1U);
    EXPECT_EQ(listed.json.at("subscriptions").at(0).at("id").as_string(), id);
    EXPECT_EQ(listed.body.find(sluice::push::base64url(ua.auth)), std::string::npos);
    EXPECT_EQ(listed.body.find("p256dh"), std::string::npos);
    // Bad keys: 400 naming the field.
    auto bad = json::parse(ua.subscription_json(service.url("/x"))).as_object();
    bad["keys"].as_object()["p256dh"] = "AAAA";
    const auto refused = h.call("POST", "/v1/push/subscriptions", json::serialize(bad));
    EXPECT_EQ(refused.status, 400U);
    EXPECT_NE(refused.body.find("p256dh"), std::string::npos) << refused.body;
    EXPECT_EQ(h.call("DELETE", "/v1/push/subscriptions/" + id).status, 204U);
    EXPECT_EQ(h.call("DELETE", "/v1/push/subscriptions/" + id).status, 404U);
    EXPECT_TRUE(
        h.call("GET", "/v1/push/subscriptions").json.at("subscriptions").as_array().empty());
}

TEST(Push, ATestPushGoesToThatSubscriptionAloneAndOnlyItsTokenMaySendIt) {
    TempDir dir;
    LoopbackReceiver service;
    LoopbackReceiver viewer_service;
    PushHub h(dir, {});
    SluiceProcess mint({"token", "new", "--viewer", "--data", dir.path()}, false);
    ASSERT_EQ(mint.wait(20s), 0);
    auto viewer = mint.output();
    viewer.erase(viewer.find_last_not_of('\n') + 1);
    const auto ua = BrowserKeys::make();
    const auto id = h.subscribe(ua, service.url("/push/t"));
    ASSERT_FALSE(id.empty());
    const auto viewer_id = h.subscribe(BrowserKeys::make(), viewer_service.url("/v"), viewer);
    ASSERT_FALSE(viewer_id.empty());
    const auto r = h.call("POST", "/v1/push/subscriptions/" + id + "/test");
    ASSERT_EQ(r.status, 202U) << r.body;
    EXPECT_EQ(r.json.at("kind"), "test");
    ASSERT_TRUE(service.wait_for(1));
    const auto got = service.received().at(0);
    EXPECT_EQ(got.target, "/push/t");
    EXPECT_EQ(check_vapid(got.header("authorization"), h.public_key(), service.url("")), "");
    std::string why;
    const auto text = decrypt_push(got.body, ua, &why);
    ASSERT_TRUE(text) << why;
    const auto p = json::parse(*text);
    EXPECT_EQ(p.at("kind"), "test");
    EXPECT_EQ(p.at("headline"), "sluice: notifications work");
    EXPECT_EQ(p.at("url"), "/");
    // Another token's subscription is no subscription of this one: 404 both ways.
    EXPECT_EQ(h.call("POST", "/v1/push/subscriptions/" + viewer_id + "/test").status, 404U);
    EXPECT_EQ(h.call("POST", "/v1/push/subscriptions/" + id + "/test", {}, viewer).status, 404U);
    EXPECT_EQ(h.call("POST", "/v1/push/subscriptions/ps-nope/test").status, 404U);
    EXPECT_EQ(h.call("GET", "/v1/push/subscriptions/" + id + "/test").status, 405U);
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(service.received().size(), 1U); // to that subscription, once
    EXPECT_TRUE(viewer_service.received().empty());
}

TEST(Push, A410FromThePushServiceRemovesTheSubscription) {
    TempDir dir;
    LoopbackReceiver service;
    service.default_status(410);
    PushHub h(dir, {});
    ASSERT_FALSE(h.subscribe(BrowserKeys::make(), service.url("/gone")).empty());
    (void)h.ask(dir, SESSION_A, "ls");
    ASSERT_TRUE(service.wait_for(1));
    bool empty = false;
    for (int i = 0; i < 100 && !empty; ++i) {
        empty = h.call("GET", "/v1/push/subscriptions").json.at("subscriptions").as_array().empty();
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_TRUE(empty);
    (void)h.ask(dir, SESSION_B, "ls");
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(service.received().size(), 1U); // never pushed to again
}

TEST(Push, SubscriptionsSurviveARestart) {
    TempDir dir;
    LoopbackReceiver service;
    const auto ua = BrowserKeys::make();
    std::string id;
    std::string key;
    {
        PushHub h(dir, {});
        id = h.subscribe(ua, service.url("/push/1"));
        key = h.public_key();
        EXPECT_EQ(h.hub.terminate(), 0);
    }
    PushHub h(dir, {});
    EXPECT_EQ(h.public_key(), key); // the same VAPID key
    const auto listed = h.call("GET", "/v1/push/subscriptions");
    ASSERT_EQ(listed.json.at("subscriptions").as_array().size(), 1U);
    EXPECT_EQ(listed.json.at("subscriptions").at(0).at("id").as_string(), id);
    (void)h.ask(dir, SESSION_A, "make");
    ASSERT_TRUE(service.wait_for(1));
    EXPECT_TRUE(decrypt_push(service.received().at(0).body, ua));
}

TEST(Push, AViewerSubscriptionHearsOnlyOfTheSeatItMayWatch) {
    TempDir dir;
    LoopbackReceiver owner_service;
    LoopbackReceiver viewer_service;
    PushHub h(dir, {});
    const auto a = h.ask(dir, SESSION_A, "echo a");
    const std::string seat_a(a.at("seat").as_string());
    SluiceProcess mint({"token", "new", "--viewer", "--seat", seat_a, "--data", dir.path()}, false);
    ASSERT_EQ(mint.wait(20s), 0);
    auto viewer = mint.output();
    viewer.erase(viewer.find_last_not_of('\n') + 1);
    // Its one act: a subscription. Anything else it POSTs is still refused.
    EXPECT_EQ(h.call("POST", "/v1/seats", "{}", viewer).status, 403U);
    const auto ua = BrowserKeys::make();
    ASSERT_FALSE(h.subscribe(ua, viewer_service.url("/v"), viewer).empty());
    ASSERT_FALSE(h.subscribe(BrowserKeys::make(), owner_service.url("/o")).empty());
    // Each token lists its own.
    EXPECT_EQ(
        h.call("GET", "/v1/push/subscriptions", {}, viewer)
            .json.at("subscriptions")
            .at(0)
            .at("seat")
            .as_string(),
        seat_a);
    (void)h.ask(dir, SESSION_B, "echo b");
    (void)h.ask(dir, SESSION_A, "echo a2");
    ASSERT_TRUE(owner_service.wait_for(2));
    ASSERT_TRUE(viewer_service.wait_for(1));
    std::this_thread::sleep_for(500ms);
    ASSERT_EQ(viewer_service.received().size(), 1U);
    const auto p = json::parse(decrypt_push(viewer_service.received().at(0).body, ua).value());
    EXPECT_EQ(p.at("seat").as_string(), seat_a);
    EXPECT_EQ(p.at("summary"), "echo a2");
}

TEST(Push, AHangingPushServiceDoesNotDelayTheSeatsFrames) {
    TempDir dir;
    LoopbackReceiver service;
    service.hang(true);
    PushHub h(dir, {"--notify-long-turn", "0"}); // every turn's end is pushed too
    ASSERT_FALSE(h.subscribe(BrowserKeys::make(), service.url("/hang")).empty());
    (void)h.ask(dir, SESSION_A, "sleep 1");
    ASSERT_TRUE(service.wait_for(1)); // that push now hangs
    const auto created = h.call("POST", "/v1/seats", R"({"name":"fast"})");
    ASSERT_EQ(created.status, 201U) << created.body;
    const std::string seat(created.json.at("seat").as_string());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
        const auto sent = h.call("POST", "/v1/seats/" + seat + "/messages", R"({"text":"hi"})");
        ASSERT_EQ(sent.status, 202U) << sent.body;
        bool idle = false;
        for (int j = 0; j < 200 && !idle; ++j) {
            idle = h.call("GET", "/v1/seats/" + seat).json.at("state") == "idle";
            if (!idle) {
                std::this_thread::sleep_for(10ms);
            }
        }
        ASSERT_TRUE(idle);
    }
    // Five turns, each pushed into a service that never answers, ended at once.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_GE(service.received().size(), 2U);
    EXPECT_EQ(h.hub.terminate(), 0); // and the hub stops with pushes in flight
}

TEST(Webhook, PostsSignedJsonAndRetriesAfterA500) {
    TempDir dir;
    LoopbackReceiver hook;
    hook.script({500});
    PushHub h(dir, {"--notify-url", hook.url("/hook"), "--notify-secret", "k3y"});
    const auto asked = h.ask(dir, SESSION_A, "git push");
    ASSERT_TRUE(hook.wait_for(2));
    const auto got = hook.received();
    EXPECT_EQ(got[0].body, got[1].body); // the same body, again
    const auto& r = got[1];
    EXPECT_EQ(
        r.header("x-sluice-signature"), "sha256=" + sluice::push::hmac_sha256_hex("k3y", r.body));
    const auto p = json::parse(r.body);
    EXPECT_EQ(p.at("kind"), "permission");
    EXPECT_EQ(p.at("seat"), asked.at("seat"));
    EXPECT_EQ(p.at("summary"), "git push");
    EXPECT_EQ(p.at("request_id"), asked.at("request_id"));
}

TEST(Webhook, NtfyFormIsPlainText) {
    TempDir dir;
    LoopbackReceiver hook;
    PushHub h(
        dir,
        {"--notify-url",
         hook.url("/topic"),
         "--notify-format",
         "ntfy",
         "--public-url",
         "https://hub.example.org"});
    const auto asked = h.ask(dir, SESSION_A, "npm publish");
    ASSERT_TRUE(hook.wait_for(1));
    const auto r = hook.received().at(0);
    EXPECT_EQ(r.body, "npm publish");
    EXPECT_NE(r.header("title").find("allow Bash?"), std::string::npos) << r.header("title");
    EXPECT_EQ(r.header("priority"), "4");
    EXPECT_EQ(r.header("tags"), "lock");
    EXPECT_EQ(
        r.header("click"),
        "https://hub.example.org/#/seat/" + std::string(asked.at("seat").as_string()));
}

} // namespace
