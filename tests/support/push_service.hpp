// Test support: a loopback HTTP receiver (a push service or a webhook endpoint), the browser's
// side of RFC 8291 (decrypting a push with the subscription's private key) and a VAPID check.
#pragma once

#include <sluice/push/web_push.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sluice::test {

/// One request the receiver took.
struct Received {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers; ///< names lowercased
    std::string body;

    /// The header `name` (lowercase), or "".
    [[nodiscard]] std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

/// An HTTP/1.1 server on 127.0.0.1:0, one thread per connection, answering each request with
/// the next scripted status (then the default), or holding it unanswered while `hang` is on.
class LoopbackReceiver {
public:
    LoopbackReceiver();
    ~LoopbackReceiver();
    LoopbackReceiver(const LoopbackReceiver&) = delete;
    LoopbackReceiver& operator=(const LoopbackReceiver&) = delete;

    /// "http://127.0.0.1:<port><path>".
    [[nodiscard]] std::string url(const std::string& path) const;
    /// The statuses of the next requests, in order (then `default_status`).
    void script(std::vector<unsigned> statuses);
    /// The status answered when the script is empty (201 at first).
    void default_status(unsigned status);
    /// While on, requests are read and recorded but never answered (released when turned off
    /// or at destruction).
    void hang(bool on);
    /// The requests so far.
    [[nodiscard]] std::vector<Received> received() const;
    /// Waits until at least `n` requests arrived; returns whether they did within `timeout`.
    bool wait_for(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(20));

private:
    void accept_loop();
    void serve(int fd);

    int listen_fd_{-1};
    std::uint16_t port_{};
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<unsigned> script_;
    unsigned default_{201};
    bool hang_{false};
    bool stopping_{false};
    std::vector<Received> received_;
    std::vector<std::thread> conns_;
    std::thread acceptor_;
};

/// A browser's push subscription keys: its P-256 pair and auth secret.
struct BrowserKeys {
    push::EcKey key;
    std::string auth; ///< 16 bytes

    /// New random keys.
    static BrowserKeys make();
    /// The PushSubscription JSON for `endpoint`.
    [[nodiscard]] std::string subscription_json(const std::string& endpoint) const;
};

/// RFC 8291 decryption of an aes128gcm body with the browser's keys: the plaintext, or nothing
/// (with `why`) when the header, the keys or the tag do not fit.
std::optional<std::string>
decrypt_push(const std::string& body, const BrowserKeys& keys, std::string* why = nullptr);

/// Checks an `Authorization: vapid t=<jwt>, k=<key>` header: `k` is `public_key_b64`, the JWT's
/// ES256 signature verifies against it, `aud` is `audience`, `exp` is within 24 h and `sub` is a
/// mailto: or https: URL. Empty when all hold, else what failed.
std::string check_vapid(
    const std::string& authorization,
    const std::string& public_key_b64,
    const std::string& audience);

} // namespace sluice::test
