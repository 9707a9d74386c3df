// SharedStore: a cluster's Web Push state in Redis — one VAPID key and one set of subscriptions
// for every node (`serve --redis`). Private to src/push; NotifySender's storage in a cluster.
#pragma once

#include <sluice/push/sender.hpp>
#include <sluice/redis/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice::push {

/// The id a cluster gives a subscription: "ps-" and the base64url of the first 9 bytes of
/// SHA-256(owner "\n" endpoint). The same browser subscribing again through any node (the same
/// endpoint, the same token) replaces its subscription, as a single hub's does, without a lookup.
[[nodiscard]] std::string
shared_subscription_id(const std::string& owner, const std::string& endpoint);

/// Why Redis and not the shared seats dir: every cluster has Redis (`--shared-seats` is optional),
/// and Redis is already the arbiter of who owns what. The key is made once with `SET NX` (the
/// first node's data-dir key wins; every node then signs with it, so a browser that subscribed
/// with one `applicationServerKey` through any node hears from every owner). Subscriptions are
/// one hash, `<prefix>push:subs` (id → the JSON the data dir's file keeps, with its secrets, as
/// the seats' frames are in Redis too), changed only by Lua scripts (add within MAX_SUBSCRIPTIONS,
/// remove by its owner, remove when a push service said 404/410 — and only the subscription
/// pushed to, not one the browser made again since). A file in a shared folder would need a lock
/// across machines that nothing here provides: two nodes writing it would lose each other's
/// changes.
///
/// Each node keeps the set in memory (the sender's, for `notify` on a seat's strand, which must
/// not wait for Redis): read at open, after each change made here, and every `refresh` — so a
/// subscription made through another node reaches this one within `refresh`. Redis away: the
/// set last read keeps serving sends; changes fail (io_error) until it is back.
///
/// @par Thread safety
/// `open` from any thread but the io_context's (it waits for it); everything else on the
/// io_context's thread (the sender's).
class SharedStore {
public:
    /// The whole set, as Redis has it (called on the io_context's thread).
    using Replace = std::function<void(std::vector<Subscription>)>;

    /// A store on `io` (the sender's); nothing connects before `open`.
    /// @throw std::runtime_error when a `rediss://` URL's TLS files cannot be loaded.
    SharedStore(boost::asio::io_context& io, SharedPushConfig cfg, Replace replace);
    ~SharedStore();
    SharedStore(const SharedStore&) = delete;
    SharedStore& operator=(const SharedStore&) = delete;
    SharedStore(SharedStore&&) = delete;
    SharedStore& operator=(SharedStore&&) = delete;

    /// Connects, agrees the cluster's VAPID key (`offered` becomes it when no node made one
    /// yet), reads the subscriptions (through `replace`) and starts refreshing them. Blocking, at
    /// start-up only, while `io` runs on another thread. Errors: Redis does not answer within
    /// the connect timeout, or keeps a key that is not one.
    Result<EcKey> open(const EcKey& offered);

    /// Stores `sub` (its id and created set) unless the cluster has MAX_SUBSCRIPTIONS others
    /// (overloaded); `done` on the io_context's thread.
    void put(Subscription sub, std::function<void(Result<Subscription>)> done);

    /// Removes subscription `id` if `owner` made it (any when `all`); not_found otherwise.
    void
    remove(std::string id, std::string owner, bool all, std::function<void(Result<bool>)> done);

    /// A push service said `sub` is gone (404/410): removed, unless it was made again since.
    void gone(const Subscription& sub);

    /// Stops refreshing and closes the connection (on the io_context's thread). Idempotent.
    void stop();

private:
    boost::asio::awaitable<Result<EcKey>> agree_key(std::string pem);
    boost::asio::awaitable<Result<void>> reload();
    boost::asio::awaitable<Result<redis::Reply>> run(std::vector<std::string> args);
    boost::asio::awaitable<void> refresh_loop();

    [[nodiscard]] std::string key(const char* what) const { return cfg_.prefix + what; }

    boost::asio::io_context& io_;
    SharedPushConfig cfg_;
    Replace replace_;
    std::shared_ptr<redis::Client> redis_;
    boost::asio::steady_timer timer_;
    std::atomic<bool> stopped_{false};
};

} // namespace sluice::push
