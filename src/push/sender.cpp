// NotifySender: Web Push and webhooks from one bounded queue on its own thread (push/sender.hpp).
#include "message.hpp"
#include "shared_store.hpp"
#include "subscription_json.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/net/http_client.hpp>
#include <sluice/push/sender.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace sluice::push {

namespace json = boost::json;
namespace asio = boost::asio;

namespace {

std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string new_subscription_id() {
    std::array<unsigned char, 9> b{};
    if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) {
        return "ps-" + std::to_string(unix_now());
    }
    return "ps-" + base64url(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

// A loopback endpoint is never proxied (local push services, tests).
bool loopback(std::string_view origin) {
    for (std::string_view host : {"://127.", "://localhost", "://[::1]"}) {
        if (origin.find(host) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

struct NotifySender::Delivery {
    bool is_push{true};
    Subscription sub; // push
    std::string url;  // webhook
    std::shared_ptr<const Message> message;
};

Result<void> check_subscription(
    std::string_view endpoint, std::string_view p256dh, std::string_view auth, Subscription& out) {
    if (endpoint.empty() || endpoint.size() > 2048 || !endpoint_origin(endpoint)) {
        return Failure::of(
            errc::bad_request,
            "field 'endpoint' must be an absolute http(s) URL (at most 2048 bytes)");
    }
    const auto point = from_base64url(p256dh);
    if (!point || point->size() != 65) {
        return Failure::of(
            errc::bad_request,
            "field 'keys.p256dh' must be the base64url of a P-256 public key (65 bytes)");
    }
    if (auto k = EcKey::from_public(*point); !k) {
        return Failure::of(errc::bad_request, "field 'keys.p256dh': " + k.error().message);
    }
    const auto secret = from_base64url(auth);
    if (!secret || secret->size() != 16) {
        return Failure::of(
            errc::bad_request, "field 'keys.auth' must be the base64url of 16 bytes");
    }
    out.endpoint = std::string(endpoint);
    out.p256dh = base64url(*point);
    out.auth = base64url(*secret);
    return {};
}

NotifySender::NotifySender(SenderConfig cfg)
    : cfg_(std::move(cfg)) {
}

Result<std::shared_ptr<NotifySender>> NotifySender::open(SenderConfig cfg) {
    bool created = false;
    auto key = vapid_key(cfg.data_dir, created);
    if (!key) {
        return key.error();
    }
    if (created) {
        spdlog::info(
            "made a VAPID key for Web Push in {}", (cfg.data_dir / VAPID_KEY_FILE).string());
    }
    std::shared_ptr<NotifySender> s(new NotifySender(std::move(cfg)));
    if (s->cfg_.shared) {
        try {
            s->shared_ = std::make_unique<SharedStore>(
                s->io_, *s->cfg_.shared, [raw = s.get()](std::vector<Subscription> subs) {
                    raw->replace(std::move(subs));
                });
        } catch (const std::exception& e) {
            return Failure::of(errc::bad_request, e.what()); // a rediss:// TLS file
        }
    } else {
        s->load();
    }
    s->thread_ = std::thread([raw = s.get()] {
        auto work = asio::make_work_guard(raw->io_);
        raw->io_.run();
    });
    if (s->shared_) {
        // The cluster's key (this node's when it is the first): every node signs with it.
        auto agreed = s->shared_->open(*key);
        if (!agreed) {
            return agreed.error();
        }
        key = std::move(agreed);
    }
    s->key_ = std::move(*key);
    return s;
}

NotifySender::~NotifySender() {
    stop();
}

void NotifySender::stop() {
    {
        std::lock_guard lock(mu_);
        if (stopping_) {
            return;
        }
        stopping_ = true;
        queue_.clear();
    }
    stop_.cancel("the hub is stopping");
    asio::post(io_, [this] {
        if (shared_) {
            shared_->stop();
        }
        if (running_ == 0) {
            io_.stop();
        }
    });
    if (thread_.joinable()) {
        thread_.join();
    }
}

void NotifySender::load() {
    const auto path = cfg_.data_dir / SUBSCRIPTIONS_FILE;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code jec;
    auto v = json::parse(text.str(), jec);
    const auto* arr = jec             ? nullptr
                      : v.is_object() ? v.get_object().if_contains("subscriptions")
                                      : nullptr;
    if (arr == nullptr || !arr->is_array()) {
        spdlog::warn("{}: not a subscriptions file; no push subscriptions loaded", path.string());
        return;
    }
    for (const auto& e : arr->get_array()) {
        if (const auto* o = e.if_object()) {
            if (auto s = subscription_from_json(*o)) {
                subs_.push_back(std::move(*s));
            }
        }
    }
}

Result<void> NotifySender::save() {
    json::array arr;
    {
        std::lock_guard lock(mu_);
        for (const auto& s : subs_) {
            arr.push_back(subscription_json(s));
        }
    }
    const auto path = cfg_.data_dir / SUBSCRIPTIONS_FILE;
    auto w = safe_write(
        path, json::serialize(json::object{{"subscriptions", std::move(arr)}}) + "\n", 0600);
    if (!w) {
        return Failure::of(
            write_errc(w.error()), "cannot write " + path.string() + ": " + w.error().message());
    }
    return {};
}

void NotifySender::start_subscribe(
    Subscription sub, const std::function<void(Result<Subscription>)>& done) {
    if (!shared_) {
        done(subscribe(std::move(sub)));
        return;
    }
    sub.id = shared_subscription_id(sub.owner, sub.endpoint);
    sub.created = unix_now();
    shared_->put(std::move(sub), done);
}

void NotifySender::start_unsubscribe(
    const std::string& id,
    const std::string& owner,
    bool all,
    const std::function<void(Result<bool>)>& done) {
    if (!shared_) {
        done(unsubscribe(id, owner, all));
        return;
    }
    shared_->remove(id, owner, all, done);
}

void NotifySender::replace(std::vector<Subscription> subs) {
    std::lock_guard lock(mu_);
    subs_ = std::move(subs);
}

Result<Subscription> NotifySender::subscribe(Subscription sub) {
    {
        std::lock_guard lock(mu_);
        auto same = std::find_if(subs_.begin(), subs_.end(), [&](const Subscription& s) {
            return s.endpoint == sub.endpoint && s.owner == sub.owner;
        });
        if (same != subs_.end()) {
            sub.id = same->id;
            *same = sub;
        } else if (subs_.size() >= MAX_SUBSCRIPTIONS) {
            return Failure::of(
                errc::overloaded,
                "this hub keeps at most " + std::to_string(MAX_SUBSCRIPTIONS)
                    + " push subscriptions; delete one first");
        } else {
            sub.id = new_subscription_id();
            sub.created = unix_now();
            subs_.push_back(sub);
        }
    }
    if (auto w = save(); !w) {
        return w.error();
    }
    return sub;
}

Result<bool> NotifySender::unsubscribe(const std::string& id, const std::string& owner, bool all) {
    {
        std::lock_guard lock(mu_);
        auto it = std::find_if(subs_.begin(), subs_.end(), [&](const Subscription& s) {
            return s.id == id && (all || s.owner == owner);
        });
        if (it == subs_.end()) {
            return Failure::of(errc::not_found, "no such push subscription: " + id);
        }
        subs_.erase(it);
    }
    if (auto w = save(); !w) {
        return w.error();
    }
    return true;
}

std::vector<Subscription> NotifySender::subscriptions(const std::string& owner, bool all) const {
    std::lock_guard lock(mu_);
    std::vector<Subscription> out;
    for (const auto& s : subs_) {
        if (all || s.owner == owner) {
            out.push_back(s);
        }
    }
    return out;
}

std::string NotifySender::public_key() const {
    return base64url(key_.public_point());
}

SenderStats NotifySender::stats() const {
    SenderStats s;
    s.sent = sent_.load();
    s.failed = failed_.load();
    s.dropped = dropped_.load();
    s.removed = removed_.load();
    std::lock_guard lock(mu_);
    s.subscriptions = subs_.size();
    return s;
}

void NotifySender::notify(hub::Notice notice) {
    auto message = std::make_shared<const Message>(make_message(notice, cfg_.public_url));
    {
        std::lock_guard lock(mu_);
        if (stopping_) {
            return;
        }
        auto add = [&](std::shared_ptr<Delivery> d) {
            if (queue_.size() >= cfg_.queue_capacity) {
                dropped_.fetch_add(1);
                return;
            }
            d->message = message;
            queue_.push_back(std::move(d));
        };
        for (const auto& s : subs_) {
            if (s.seat.empty() || s.seat == notice.seat) {
                auto d = std::make_shared<Delivery>();
                d->sub = s;
                add(std::move(d));
            }
        }
        for (const auto& url : cfg_.webhook_urls) {
            auto d = std::make_shared<Delivery>();
            d->is_push = false;
            d->url = url;
            add(std::move(d));
        }
    }
    asio::post(io_, [this] { pump(); });
}

Result<bool> NotifySender::send_test(const std::string& id, const std::string& owner) {
    hub::Notice notice;
    notice.kind = hub::Notice::Kind::test;
    auto d = std::make_shared<Delivery>();
    d->message = std::make_shared<const Message>(make_message(notice, cfg_.public_url));
    {
        std::lock_guard lock(mu_);
        // Only the token that made it may test it (another's id is not even said to exist).
        auto it = std::find_if(subs_.begin(), subs_.end(), [&](const Subscription& s) {
            return s.id == id && s.owner == owner;
        });
        if (it == subs_.end()) {
            return Failure::of(errc::not_found, "no such push subscription: " + id);
        }
        if (stopping_) {
            return Failure::of(errc::cancelled, "the hub is stopping");
        }
        if (queue_.size() >= cfg_.queue_capacity) {
            dropped_.fetch_add(1);
            return Failure::of(errc::overloaded, "the push queue is full; try again later");
        }
        d->sub = *it;
        queue_.push_back(std::move(d));
    }
    pump(); // on the sender's thread already (async_send_test)
    return true;
}

void NotifySender::pump() {
    while (running_ < cfg_.concurrency) {
        std::shared_ptr<const Delivery> d;
        {
            std::lock_guard lock(mu_);
            if (stopping_ || queue_.empty()) {
                break;
            }
            d = std::move(queue_.front());
            queue_.pop_front();
        }
        ++running_;
        asio::co_spawn(io_, deliver(std::move(d)), [this](const std::exception_ptr& e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    spdlog::error("a notification delivery ended by an exception: {}", ex.what());
                }
            }
            --running_;
            bool stopping = false;
            {
                std::lock_guard lock(mu_);
                stopping = stopping_;
            }
            if (stopping && running_ == 0) {
                io_.stop();
                return;
            }
            pump();
        });
    }
}

asio::awaitable<void> NotifySender::deliver(std::shared_ptr<const Delivery> d) {
    if (d->is_push) {
        co_await push(*d);
    } else {
        co_await webhook(*d);
    }
}

namespace {

transport::HttpOptions options_for(const SenderConfig& cfg, std::string_view origin) {
    transport::HttpOptions o;
    o.connect_timeout = cfg.timeout;
    o.first_byte_timeout = cfg.timeout;
    o.idle_timeout = cfg.timeout;
    o.max_attempts = cfg.max_attempts;
    o.backoff_initial = cfg.backoff_initial;
    o.backoff_max = std::chrono::milliseconds(30'000);
    o.retry_after_max = std::chrono::milliseconds(60'000);
    o.max_error_body = 4096;
    if (loopback(origin)) {
        o.proxy = "";
    }
    return o;
}

} // namespace

asio::awaitable<void> NotifySender::push(const Delivery& d) {
    const auto& m = *d.message;
    const auto origin = endpoint_origin(d.sub.endpoint);
    const auto ua = from_base64url(d.sub.p256dh);
    const auto auth = from_base64url(d.sub.auth);
    if (!origin || !ua || !auth) {
        failed_.fetch_add(1);
        co_return;
    }
    // RFC 8292 §2: exp at most 24 h ahead; 12 h leaves room for a push service's clock skew.
    auto jwt = vapid_jwt(key_, *origin, cfg_.vapid_subject, unix_now() + 12 * 3600);
    auto body = encrypt_aes128gcm(m.json, *ua, *auth);
    if (!jwt || !body) {
        spdlog::warn("push to {}: {}", *origin, !jwt ? jwt.error().message : body.error().message);
        failed_.fetch_add(1);
        co_return;
    }
    transport::HttpRequest req;
    req.method = "POST";
    req.url = d.sub.endpoint;
    req.headers = {
        {"TTL", std::to_string(cfg_.ttl.count())},
        {"Content-Encoding", "aes128gcm"},
        {"Content-Type", "application/octet-stream"},
        {"Urgency", m.urgency},
        {"Authorization", "vapid t=" + *jwt + ", k=" + public_key()}};
    if (!m.topic.empty()) {
        req.headers.emplace_back("Topic", m.topic);
    }
    req.body = std::move(*body);
    transport::HttpClient client(options_for(cfg_, *origin));
    auto r = co_await client.request(std::move(req), stop_, [](std::string_view) { return true; });
    if (!r) {
        if (!stop_.is_cancelled()) {
            spdlog::warn("push to {} failed: {}", *origin, client.error_message());
        }
        failed_.fetch_add(1);
        co_return;
    }
    if (r->status == 404 || r->status == 410) {
        // RFC 8030 §7.3: the subscription is gone; it is never pushed to again.
        {
            std::lock_guard lock(mu_);
            std::erase_if(subs_, [&](const Subscription& s) { return s.id == d.sub.id; });
        }
        removed_.fetch_add(1);
        failed_.fetch_add(1);
        if (shared_) {
            shared_->gone(d.sub); // for every node
        } else if (auto w = save(); !w) {
            spdlog::error("push subscription {} is gone but: {}", d.sub.id, w.error().message);
        }
        spdlog::info("push subscription {} is gone ({}): removed", d.sub.id, r->status);
        co_return;
    }
    if (r->status / 100 != 2) {
        spdlog::warn("push to {}: the push service answered {}", *origin, r->status);
        failed_.fetch_add(1);
        co_return;
    }
    sent_.fetch_add(1);
}

asio::awaitable<void> NotifySender::webhook(const Delivery& d) {
    const auto& m = *d.message;
    transport::HttpRequest req;
    req.method = "POST";
    req.url = d.url;
    if (cfg_.ntfy) {
        req.body = m.text.empty() ? m.title : m.text;
        req.headers = {
            {"Content-Type", "text/plain; charset=utf-8"},
            {"Title", m.title},
            {"Tags", m.tags},
            {"Priority", m.priority}};
        if (!m.click.empty()) {
            req.headers.emplace_back("Click", m.click);
        }
    } else {
        req.body = m.json;
        req.headers = {{"Content-Type", "application/json"}, {"X-Sluice-Event", m.kind}};
    }
    if (!cfg_.webhook_secret.empty()) {
        req.headers.emplace_back(
            "X-Sluice-Signature", "sha256=" + hmac_sha256_hex(cfg_.webhook_secret, req.body));
    }
    const auto origin = endpoint_origin(d.url).value_or(d.url);
    transport::HttpClient client(options_for(cfg_, origin));
    auto r = co_await client.request(std::move(req), stop_, [](std::string_view) { return true; });
    if (!r || r->status / 100 != 2) {
        if (!stop_.is_cancelled()) {
            spdlog::warn(
                "webhook {} failed: {}",
                origin,
                !r ? client.error_message() : "it answered " + std::to_string(r->status));
        }
        failed_.fetch_add(1);
        co_return;
    }
    sent_.fetch_add(1);
}

std::string metrics_text(const SenderStats& s) {
    std::string out;
    auto counter = [&out](const char* name, const char* help, std::uint64_t v, const char* type) {
        out += "# HELP sluice_";
        out += name;
        out += ' ';
        out += help;
        out += "\n# TYPE sluice_";
        out += name;
        out += ' ';
        out += type;
        out += "\nsluice_";
        out += name;
        out += ' ';
        out += std::to_string(v);
        out += '\n';
    };
    counter(
        "push_sent_total", "Notifications delivered (Web Push and webhooks).", s.sent, "counter");
    counter(
        "push_failed_total",
        "Notifications that failed after their retries (a gone subscription included).",
        s.failed,
        "counter");
    counter(
        "push_dropped_total",
        "Notifications dropped because the sender's queue was full.",
        s.dropped,
        "counter");
    counter(
        "push_subscriptions_removed_total",
        "Push subscriptions removed because the push service answered 404 or 410.",
        s.removed,
        "counter");
    counter("push_subscriptions", "Push subscriptions stored.", s.subscriptions, "gauge");
    return out;
}

} // namespace sluice::push
