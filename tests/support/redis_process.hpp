// Test support: a private redis-server (unix socket, optional TCP port, no persistence).
#pragma once

#include "unit/conversation/fixtures.hpp"

#include <sys/types.h>

#include <string>

namespace sluice::test {

/// Whether redis-server is installed (scripts/install-deps installs it).
bool have_redis_server();

/// TLS files of a redis-server started with `--tls-port` (PEM paths).
struct RedisTls {
    std::string cert;         ///< the server's certificate
    std::string key;          ///< its key
    std::string ca;           ///< CAs client certificates must chain to
    bool auth_clients{false}; ///< `--tls-auth-clients yes` (else `no`)
};

/// A redis-server child: `--port <tcp> --unixsocket <tmp>/redis.sock --save "" --appendonly no`
/// (`--port 0`: no TCP unless asked). Waits until it answers; stopped by pid (SIGTERM, then
/// SIGKILL) in the destructor.
class RedisProcess {
public:
    /// Starts it. @param tcp also listen on a free 127.0.0.1 port.
    explicit RedisProcess(bool tcp = false);

    /// Starts it with TLS on a free 127.0.0.1 port too (`--tls-port`; the unix socket stays).
    explicit RedisProcess(RedisTls tls);
    ~RedisProcess();
    RedisProcess(const RedisProcess&) = delete;
    RedisProcess& operator=(const RedisProcess&) = delete;

    /// "unix://<tmp>/redis.sock".
    [[nodiscard]] std::string url() const { return "unix://" + socket_; }

    /// "redis://127.0.0.1:<port>" (with `tcp`).
    [[nodiscard]] std::string tcp_url() const {
        return "redis://127.0.0.1:" + std::to_string(port_);
    }

    /// "rediss://127.0.0.1:<tls port>" (with TLS).
    [[nodiscard]] std::string tls_url() const {
        return "rediss://127.0.0.1:" + std::to_string(tls_port_);
    }

    /// The TCP port (0 without `tcp`).
    [[nodiscard]] unsigned port() const noexcept { return port_; }

    /// Stops the server (SIGKILL when `kill`), waits for it to exit.
    void stop(bool kill = false);

    /// Starts it again on the same socket and port (empty: nothing survives a restart).
    void start();

    /// Runs `redis-cli -s <socket> <args>` and returns its output (for checks).
    [[nodiscard]] std::string cli(const std::string& args) const;

    /// The server's pid (0 when stopped).
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

private:
    TempDir dir_;
    std::string socket_;
    unsigned port_{0};
    unsigned tls_port_{0};
    RedisTls tls_;
    pid_t pid_{0};
};

} // namespace sluice::test
