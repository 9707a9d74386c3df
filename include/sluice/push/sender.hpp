// NotifySender: the hub's notifier — Web Push to stored subscriptions and webhooks, from one
// bounded queue on a thread of its own.
#pragma once

#include <sluice/core/cancel.hpp>
#include <sluice/hub/async.hpp>
#include <sluice/hub/notify.hpp>
#include <sluice/push/web_push.hpp>
#include <sluice/redis/resp.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sluice::push {

/// A cluster's Web Push state in Redis (private: src/push/shared_store.hpp).
class SharedStore;

/// The subscriptions' file in a data dir (JSON, mode 0600: it holds their secrets).
inline constexpr std::string_view SUBSCRIPTIONS_FILE = "push_subscriptions.json";

/// Most subscriptions kept; more are refused. Basis: a person's browsers and phones, for a few
/// tokens; a bound on the file and on the work of one notice.
inline constexpr std::size_t MAX_SUBSCRIPTIONS = 256;

/// One browser's push subscription, as stored.
struct Subscription {
    std::string id;         ///< public name (for DELETE)
    std::string endpoint;   ///< the push service's URL for this browser
    std::string p256dh;     ///< the browser's P-256 public key (base64url, 65 bytes)
    std::string auth;       ///< its auth secret (base64url, 16 bytes)
    std::string owner;      ///< the hex SHA-256 of the token that made it ("" with no tokens)
    std::string seat;       ///< a seat-scoped viewer's one seat ("" every seat)
    bool viewer{false};     ///< made by a viewer token
    std::int64_t created{}; ///< Unix seconds
};

/// Checks a browser's PushSubscription JSON fields (endpoint an absolute http(s) URL, p256dh a
/// P-256 point, auth 16 bytes) and fills `out`'s endpoint and keys. bad_request says which.
[[nodiscard]] Result<void> check_subscription(
    std::string_view endpoint, std::string_view p256dh, std::string_view auth, Subscription& out);

/// Where a cluster's nodes share their Web Push state (`serve --redis`): one VAPID key and one
/// set of subscriptions in Redis (src/push/shared_store.hpp says why Redis).
struct SharedPushConfig {
    redis::Url url;                                  ///< the cluster's Redis
    std::string tls_ca_file;                         ///< rediss://: CAs (empty: the system's)
    std::string tls_cert_file;                       ///< rediss://: client certificate
    std::string tls_key_file;                        ///< rediss://: its private key
    std::string prefix{"sluice:"};                   ///< keys `<prefix>push:vapid`, `…push:subs`
    std::chrono::milliseconds refresh{1000};         ///< how often a node reads the set again
    std::chrono::milliseconds connect_timeout{3000}; ///< at start-up
};

/// Settings of the sender.
struct SenderConfig {
    std::filesystem::path data_dir; ///< VAPID key and subscriptions live here (single node)
    /// In a cluster: the key and the subscriptions are the cluster's, in Redis (the data dir's
    /// key is offered as the cluster's when it has none yet); unset: the data dir's files.
    std::optional<SharedPushConfig> shared;
    std::string vapid_subject{"mailto:sluice@localhost"}; ///< the JWT `sub` (mailto: or https:)
    std::string public_url;                ///< the page's URL, for absolute card links
    std::vector<std::string> webhook_urls; ///< POSTed every notice
    std::string webhook_secret;            ///< HMAC key of X-Sluice-Signature ("" none)
    bool ntfy{false};                      ///< webhooks in ntfy's plain form
    /// Deliveries waiting; more are dropped (counted). Basis: a few events a minute for a
    /// handful of subscriptions; 256 rides out a push service down for a while.
    std::size_t queue_capacity{256};
    std::size_t concurrency{4};                       ///< deliveries in flight at once
    std::chrono::milliseconds timeout{10'000};        ///< connect, and first byte, per attempt
    unsigned max_attempts{3};                         ///< per delivery (5xx, 429, 408, no answer)
    std::chrono::milliseconds backoff_initial{1'000}; ///< first retry delay, doubled each time
    std::chrono::seconds ttl{86'400};                 ///< a push's TTL at the push service
};

/// What the sender did (for /metrics).
struct SenderStats {
    std::uint64_t sent{};          ///< deliveries accepted (2xx)
    std::uint64_t failed{};        ///< deliveries that failed after their retries
    std::uint64_t dropped{};       ///< deliveries dropped, the queue being full
    std::uint64_t removed{};       ///< subscriptions removed by a 404 or 410
    std::uint64_t subscriptions{}; ///< subscriptions stored
};

/// The notifier of a hub: each notice becomes one delivery per subscription that may hear of
/// its seat, and one per webhook, queued (bounded; dropped and counted when full) and sent from
/// its own thread and io_context, a few at a time, never on a seat's strand nor the hub's
/// writer. A push is encrypted (RFC 8291) and signed (VAPID) per delivery; a 404 or 410 removes
/// its subscription; 5xx, 429, 408 and network failures are retried with backoff, a bounded
/// number of times. Subscriptions are kept in the data dir (safe_write), written on its thread;
/// in a cluster (`SenderConfig::shared`), in Redis, shared by every node.
///
/// In a cluster only a seat's owner sends: the hub tells a notice only from a seat it hosts
/// (Seat::tell says when). A notice is queued in memory: a node killed after queuing it and
/// before its delivery took loses it, and the node taking the seat over does not send it again
/// — at most once per prompt, never twice from two nodes. Within one node a delivery retried
/// after a push service took it but its answer was lost may arrive twice; the push's Topic (the
/// seat) makes the push service and the notification's tag replace rather than stack it.
///
/// @par Thread safety
/// Safe from any thread. `stop` (and the destructor) must not run on its own thread.
class NotifySender : public hub::Notifier {
public:
    /// Reads (or makes, 0600) the VAPID key and reads the subscriptions in `cfg.data_dir`,
    /// then starts the thread. Blocking: at start-up only. Errors: the key or the file cannot be
    /// read or written.
    static Result<std::shared_ptr<NotifySender>> open(SenderConfig cfg);

    ~NotifySender() override;
    NotifySender(const NotifySender&) = delete;
    NotifySender& operator=(const NotifySender&) = delete;
    NotifySender(NotifySender&&) = delete;
    NotifySender& operator=(NotifySender&&) = delete;

    void notify(hub::Notice notice) override;

    /// The VAPID public key, base64url of its uncompressed point (`applicationServerKey`).
    [[nodiscard]] std::string public_key() const;

    /// The subscriptions made by `owner` (a token's hex digest), every one when `all`.
    [[nodiscard]] std::vector<Subscription> subscriptions(const std::string& owner, bool all) const;

    /// Stores `sub` (its id given here; one with the same endpoint and owner is replaced) and
    /// writes the file, on the sender's thread; completes with the stored subscription.
    /// Errors: too many subscriptions (overloaded), the write failed.
    template <class Token>
    auto async_subscribe(Subscription sub, Token&& token) {
        return hub::detail::async_run<Result<Subscription>>(
            io_.get_executor(),
            [this, sub = std::move(sub)](const std::function<void(Result<Subscription>)>& done) {
                start_subscribe(sub, done);
            },
            std::forward<Token>(token));
    }

    /// Removes subscription `id` if `owner` made it (any when `all`) and writes the file, on
    /// the sender's thread. not_found when there is none (of this owner).
    template <class Token>
    auto async_unsubscribe(std::string id, std::string owner, bool all, Token&& token) {
        return hub::detail::async_run<Result<bool>>(
            io_.get_executor(),
            [this, id = std::move(id), owner = std::move(owner), all](
                const std::function<void(Result<bool>)>& done) {
                start_unsubscribe(id, owner, all, done);
            },
            std::forward<Token>(token));
    }

    /// Queues one `test` notice ("sluice: notifications work") to subscription `id` alone, if
    /// `owner` made it, on the sender's thread; completes once it is queued (not delivered).
    /// Errors: not_found when `owner` has no subscription `id`; overloaded when the queue is
    /// full (the drop is counted).
    template <class Token>
    auto async_send_test(std::string id, std::string owner, Token&& token) {
        return hub::detail::async_run<Result<bool>>(
            io_.get_executor(),
            [this, id = std::move(id), owner = std::move(owner)](
                const std::function<void(Result<bool>)>& done) { done(send_test(id, owner)); },
            std::forward<Token>(token));
    }

    /// The counters.
    [[nodiscard]] SenderStats stats() const;

    /// Stops: drops what is queued, cancels deliveries in flight, joins the thread. Idempotent.
    void stop();

private:
    explicit NotifySender(SenderConfig cfg);
    struct Delivery;
    void start_subscribe(Subscription sub, const std::function<void(Result<Subscription>)>& done);
    void start_unsubscribe(
        const std::string& id,
        const std::string& owner,
        bool all,
        const std::function<void(Result<bool>)>& done);
    void replace(std::vector<Subscription> subs);
    Result<Subscription> subscribe(Subscription sub);
    Result<bool> unsubscribe(const std::string& id, const std::string& owner, bool all);
    Result<bool> send_test(const std::string& id, const std::string& owner);
    Result<void> save();
    void load();
    void pump();
    boost::asio::awaitable<void> deliver(std::shared_ptr<const Delivery> d);
    boost::asio::awaitable<void> push(const Delivery& d);
    boost::asio::awaitable<void> webhook(const Delivery& d);

    SenderConfig cfg_;
    EcKey key_;
    boost::asio::io_context io_;
    std::thread thread_;
    CancellationToken stop_;
    mutable std::mutex mu_;
    std::vector<Subscription> subs_;                    // guarded by mu_
    std::deque<std::shared_ptr<const Delivery>> queue_; // guarded by mu_
    bool stopping_{false};                              // guarded by mu_
    std::size_t running_{}; // deliveries in flight (the sender's thread only)
    std::atomic<std::uint64_t> sent_{}, failed_{}, dropped_{}, removed_{};
    std::unique_ptr<SharedStore> shared_; // a cluster's (on io_: destroyed before it)
};

/// The sender's figures as Prometheus text (`sluice_push_*_total`, `sluice_push_subscriptions`).
[[nodiscard]] std::string metrics_text(const SenderStats& s);

} // namespace sluice::push
