// Redis client: one Asio connection (TCP or unix socket), pipelined commands as coroutines,
// pub/sub mode, reconnect with backoff.
#pragma once

#include <sluice/redis/resp.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace sluice::redis {

/// How a Client connects and reconnects.
struct ClientOptions {
    Url url;                   ///< where the server is
    std::string tls_ca_file;   ///< rediss://: PEM CAs the server's certificate must chain to
                               ///< (empty: the system's store, as OpenSSL's default paths)
    std::string tls_cert_file; ///< rediss://: a client certificate chain (PEM), for servers
                               ///< with `tls-auth-clients yes` (Redis's default); empty: none
    std::string tls_key_file;  ///< rediss://: the private key of `tls_cert_file`
    std::chrono::milliseconds connect_timeout{2000}; ///< one connect attempt
    std::chrono::milliseconds backoff_min{50};       ///< first wait after a lost connection
    std::chrono::milliseconds backoff_max{2000};     ///< the longest wait between attempts
    std::size_t max_pending{100'000};                ///< commands in flight; more: overloaded
};

/// A command's outcome: a transport error (not connected, connection lost), or Redis's reply
/// (which may itself be a Redis error: `Reply::is_error`).
using CommandResult = std::tuple<boost::system::error_code, Reply>;

/// One Redis connection that keeps itself connected. Commands are pipelined: each is written
/// as soon as it is issued and answered in order. A command issued while disconnected fails at
/// once with `net::error::not_connected`; one in flight when the connection drops fails with
/// the drop's error (it may or may not have run: callers make their writes idempotent).
///
/// Pub/sub: `subscribe` puts the connection in subscriber mode (use a separate Client for
/// commands); messages go to the `on_message` callback; the channels are subscribed again after
/// every reconnect, then `on_connect` runs (a subscriber must assume it missed messages).
///
/// @par Thread safety
/// Safe from any thread: every member posts to the client's strand. Callbacks run on it.
/// TLS (`rediss://`): after the TCP connect, a TLS handshake that verifies the server's
/// certificate chain (against `tls_ca_file`, or the system's store) and that it names the URL's
/// host (DNS name or IP address, RFC 2818 rules); a failure is a failed connect attempt, with
/// the reason in `last_error` ("TLS handshake failed: certificate verify failed: …").
///
/// @par Lifetime
/// Owned by shared_ptr; `start` keeps it alive until `stop` (its loops hold a reference).
class Client : public std::enable_shared_from_this<Client> {
public:
    /// Message callback: channel and payload (on the client's strand).
    using MessageFn = std::function<void(const std::string& channel, const std::string& payload)>;

    /// A client on `io` (not connected until `start`).
    /// @throw std::runtime_error when a `rediss://` URL's TLS files cannot be loaded (a
    /// configuration error, said with the file and OpenSSL's reason).
    static std::shared_ptr<Client> create(boost::asio::io_context& io, ClientOptions opt);

    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Starts connecting (and reconnecting, with backoff, until `stop`).
    void start();

    /// Stops: closes the connection, fails what is in flight, stops reconnecting.
    void stop();

    /// Called (on the strand) after each connect, once the channels are subscribed again.
    void on_connect(std::function<void()> fn);

    /// Called (on the strand) when a connection is lost.
    void on_disconnect(std::function<void()> fn);

    /// Sets the pub/sub message callback.
    void on_message(MessageFn fn);

    /// Waits up to `timeout` for a connection. @return whether connected.
    boost::asio::awaitable<bool> wait_connected(std::chrono::milliseconds timeout);

    /// Runs one command. Never throws on transport failure: the error is in the tuple.
    boost::asio::awaitable<CommandResult> command(std::vector<std::string> args);

    /// Asynchronous form: `done(ec, reply)` runs on the handler's associated executor.
    void async_command(
        std::vector<std::string> args,
        boost::asio::any_completion_handler<void(boost::system::error_code, Reply)> done);

    /// Subscribes to `channel` (kept across reconnects). Completes once Redis confirmed it
    /// (or with the error when disconnected; it is subscribed at the next connect anyway).
    boost::asio::awaitable<boost::system::error_code> subscribe(std::string channel);

    /// Unsubscribes from `channel`.
    void unsubscribe(std::string channel);

    /// Whether connected now (a snapshot).
    [[nodiscard]] bool connected() const noexcept { return connected_; }

    /// How many times a connection was made (1 after the first connect).
    [[nodiscard]] std::uint64_t connects() const noexcept { return connects_; }

    /// Why the last connect attempt failed (empty after a successful one), for messages.
    [[nodiscard]] std::string last_error() const;

private:
    using Handler = boost::asio::any_completion_handler<void(boost::system::error_code, Reply)>;
    using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
    struct Conn;

    Client(boost::asio::io_context& io, ClientOptions opt);
    boost::asio::awaitable<void> run();
    boost::asio::awaitable<boost::system::error_code> connect_once(Conn& c);
    boost::asio::awaitable<boost::system::error_code> tls_handshake(Conn& c);
    boost::asio::awaitable<void> read_loop(Conn& c);
    boost::asio::awaitable<void> write_loop(Conn& c);
    void issue(const std::vector<std::string>& args, Handler done);
    void fail_pending(boost::system::error_code ec);
    static void complete(Handler h, boost::system::error_code ec, Reply r);
    void set_error(std::string why);

    Strand strand_;
    ClientOptions opt_;
    boost::asio::steady_timer wake_;  // the write loop's condition variable
    boost::asio::steady_timer sleep_; // backoff
    std::string out_;                 // bytes to write
    std::deque<Handler> pending_;     // answered in order
    std::set<std::string> channels_;  // subscribed, kept across reconnects
    std::function<void()> on_connect_, on_disconnect_;
    MessageFn on_message_;
    std::shared_ptr<Conn> conn_;
    std::unique_ptr<boost::asio::ssl::context> tls_; // rediss:// only
    mutable std::mutex error_mu_;                    // guards last_error_ (read from any thread)
    std::string last_error_;
    std::atomic<bool> connected_{false};
    std::atomic<std::uint64_t> connects_{0};
    bool started_{false}, stopped_{false};
};

} // namespace sluice::redis
