// SharedStore: a cluster's VAPID key and push subscriptions in Redis (shared_store.hpp).
#include "shared_store.hpp"

#include "subscription_json.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <array>
#include <future>

namespace sluice::push {

namespace json = boost::json;
namespace asio = boost::asio;
using redis::Reply;

namespace {

// KEYS[1] the hash; ARGV id, JSON, the most kept. 1 stored (new or replaced), 0 full.
constexpr const char* PUT_LUA = R"(
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
   and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1)";

// KEYS[1] the hash; ARGV id, owner, "1" for any owner's. 1 removed, 0 none (of this owner).
constexpr const char* REMOVE_LUA = R"(
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
if ARGV[3] ~= '1' then
  local ok, s = pcall(cjson.decode, v)
  if not ok or s.owner ~= ARGV[2] then return 0 end
end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1)";

// KEYS[1] the hash; ARGV id, the auth secret pushed to. Removed only while it is that one: the
// same browser subscribing again (the same id) with new keys keeps its new subscription.
constexpr const char* GONE_LUA = R"(
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local ok, s = pcall(cjson.decode, v)
if ok and s.auth ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1)";

// The completion of every coroutine here: an escaped exception is logged (a change's `done` is
// then never called: its request ends with the connection).
auto logged(const char* what) {
    return [what](const std::exception_ptr& e) {
        if (!e) {
            return;
        }
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            spdlog::error("push: {} ended by an exception: {}", what, ex.what());
        }
    };
}

Failure redis_failure(const std::string& what) {
    return Failure::of(errc::io_error, "Redis (the cluster's push subscriptions): " + what);
}

} // namespace

std::string shared_subscription_id(const std::string& owner, const std::string& endpoint) {
    const std::string text = owner + "\n" + endpoint;
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
    return "ps-" + base64url(std::string_view(reinterpret_cast<const char*>(digest.data()), 9));
}

SharedStore::SharedStore(asio::io_context& io, SharedPushConfig cfg, Replace replace)
    : io_(io)
    , cfg_(std::move(cfg))
    , replace_(std::move(replace))
    , timer_(io) {
    redis::ClientOptions o;
    o.url = cfg_.url;
    o.tls_ca_file = cfg_.tls_ca_file;
    o.tls_cert_file = cfg_.tls_cert_file;
    o.tls_key_file = cfg_.tls_key_file;
    redis_ = redis::Client::create(io_, std::move(o));
}

SharedStore::~SharedStore() = default;

Result<EcKey> SharedStore::open(const EcKey& offered) {
    auto pem = offered.pem();
    if (!pem) {
        return pem.error();
    }
    redis_->start();
    auto promise = std::make_shared<std::promise<Result<EcKey>>>();
    auto agreed = promise->get_future();
    asio::co_spawn(
        io_,
        [this, promise, pem = std::move(*pem)]() -> asio::awaitable<void> {
            if (!co_await redis_->wait_connected(cfg_.connect_timeout)) {
                promise->set_value(redis_failure(
                    "no answer from " + cfg_.url.display() + ": " + redis_->last_error()));
                co_return;
            }
            auto key = co_await agree_key(pem);
            if (key) {
                if (auto read = co_await reload(); !read) {
                    promise->set_value(read.error());
                    co_return;
                }
                asio::co_spawn(io_, refresh_loop(), logged("the subscriptions' refresh"));
            }
            promise->set_value(std::move(key));
        },
        [promise](const std::exception_ptr& e) {
            if (e) {
                promise->set_value(redis_failure("the start-up ended by an exception"));
            }
        });
    // The connect timeout, then a few round trips.
    if (agreed.wait_for(cfg_.connect_timeout + std::chrono::seconds(5))
        != std::future_status::ready) {
        return redis_failure("no answer from " + cfg_.url.display());
    }
    return agreed.get();
}

asio::awaitable<Result<Reply>> SharedStore::run(std::vector<std::string> args) {
    auto [ec, r] = co_await redis_->command(std::move(args));
    if (ec) {
        co_return redis_failure(ec.message());
    }
    if (r.is_error()) {
        co_return redis_failure(r.str);
    }
    co_return std::move(r);
}

asio::awaitable<Result<EcKey>> SharedStore::agree_key(std::string pem) {
    // The first node's key becomes the cluster's (SET NX: Redis decides which node was first).
    // Named (never a braced list in a co_await: GCC 12 miscompiles it, "array used as
    // initializer").
    std::vector<std::string> set_args{"SET", key("push:vapid"), pem, "NX"};
    if (auto set = co_await run(std::move(set_args)); !set) {
        co_return set.error();
    }
    std::vector<std::string> get_args{"GET", key("push:vapid")};
    auto got = co_await run(std::move(get_args));
    if (!got) {
        co_return got.error();
    }
    if (got->type != Reply::Type::string) {
        co_return redis_failure("no VAPID key at " + key("push:vapid"));
    }
    auto k = EcKey::from_pem(got->str);
    if (!k) {
        co_return redis_failure(key("push:vapid") + " is not a VAPID key: " + k.error().message);
    }
    if (got->str != pem) {
        spdlog::info("push: this node signs with the cluster's VAPID key (in Redis), not its own");
    }
    co_return std::move(*k);
}

asio::awaitable<Result<void>> SharedStore::reload() {
    std::vector<std::string> args{"HGETALL", key("push:subs")};
    auto all = co_await run(std::move(args));
    if (!all) {
        co_return all.error();
    }
    std::vector<Subscription> subs;
    const auto& e = all->elements;
    for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
        boost::system::error_code jec;
        auto v = json::parse(e[i + 1].str, jec);
        if (jec || !v.is_object()) {
            continue;
        }
        if (auto s = subscription_from_json(v.get_object())) {
            subs.push_back(std::move(*s));
        }
    }
    replace_(std::move(subs));
    co_return Result<void>{};
}

asio::awaitable<void> SharedStore::refresh_loop() {
    while (!stopped_) {
        timer_.expires_after(cfg_.refresh);
        co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
        if (stopped_) {
            break;
        }
        if (auto read = co_await reload(); !read && redis_->connected()) {
            spdlog::warn("push: {}", read.error().message);
        }
    }
}

void SharedStore::put(Subscription sub, std::function<void(Result<Subscription>)> done) {
    auto start = [this, sub = std::move(sub), done]() mutable -> asio::awaitable<void> {
        std::vector<std::string> args{
            "EVAL",
            PUT_LUA,
            "1",
            key("push:subs"),
            sub.id,
            json::serialize(subscription_json(sub)),
            std::to_string(MAX_SUBSCRIPTIONS)};
        auto r = co_await run(std::move(args));
        if (!r) {
            done(r.error());
            co_return;
        }
        if (r->integer != 1) {
            done(Failure::of(
                errc::overloaded,
                "this cluster keeps at most " + std::to_string(MAX_SUBSCRIPTIONS)
                    + " push subscriptions; delete one first"));
            co_return;
        }
        co_await reload(); // this node's set has it at once (others within a refresh)
        done(std::move(sub));
    };
    asio::co_spawn(io_, std::move(start), logged("storing a push subscription"));
}

void SharedStore::remove(
    std::string id, std::string owner, bool all, std::function<void(Result<bool>)> done) {
    auto start = [this, id = std::move(id), owner = std::move(owner), all, done]() mutable
        -> asio::awaitable<void> {
        std::vector<std::string> args{
            "EVAL", REMOVE_LUA, "1", key("push:subs"), id, owner, all ? "1" : "0"};
        auto r = co_await run(std::move(args));
        if (!r) {
            done(r.error());
            co_return;
        }
        if (r->integer != 1) {
            done(Failure::of(errc::not_found, "no such push subscription: " + id));
            co_return;
        }
        co_await reload();
        done(true);
    };
    asio::co_spawn(io_, std::move(start), logged("removing a push subscription"));
}

void SharedStore::gone(const Subscription& sub) {
    auto start = [this, id = sub.id, auth = sub.auth]() -> asio::awaitable<void> {
        std::vector<std::string> args{"EVAL", GONE_LUA, "1", key("push:subs"), id, auth};
        auto r = co_await run(std::move(args));
        if (!r) {
            spdlog::error("push subscription {} is gone but: {}", id, r.error().message);
        }
        co_await reload();
    };
    asio::co_spawn(io_, std::move(start), logged("removing a gone push subscription"));
}

void SharedStore::stop() {
    if (stopped_.exchange(true)) {
        return;
    }
    timer_.cancel();
    redis_->stop();
}

} // namespace sluice::push
