// Redis protocol (RESP2), sans-I/O: replies, the command encoder, the reply reader, URLs.
#pragma once

#include <boost/system/result.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::redis {

/// One RESP2 reply, owned (converted from hiredis's reply tree).
struct Reply {
    /// The reply's RESP type.
    enum class Type : std::uint8_t { nil, status, error, integer, string, array };

    Type type{Type::nil};        ///< what it is
    std::string str;             ///< status, error and bulk string text
    std::int64_t integer{};      ///< an integer reply
    std::vector<Reply> elements; ///< an array's elements

    /// Whether Redis answered with an error (`-ERR …`).
    [[nodiscard]] bool is_error() const noexcept { return type == Type::error; }

    /// Whether it is a nil (or a nil array).
    [[nodiscard]] bool is_nil() const noexcept { return type == Type::nil; }
};

/// Appends `args` to `out` as one RESP command (an array of bulk strings). Written here rather
/// than with hiredis's redisFormatCommandArgv: it is a few lines and needs no malloc'd buffer.
void append_command(std::string& out, const std::vector<std::string>& args);

/// Incremental reply parser: bytes in, whole replies out. Wraps hiredis's sans-I/O reader
/// (`redisReader`, libhiredis-dev), which does no I/O of its own.
///
/// @par Thread safety
/// Not thread-safe; one per connection.
class ReplyReader {
public:
    ReplyReader();
    ~ReplyReader();
    ReplyReader(const ReplyReader&) = delete;
    ReplyReader& operator=(const ReplyReader&) = delete;

    /// Feeds bytes read from the socket. @return false on a protocol error (the connection is
    /// then unusable).
    bool feed(std::string_view bytes);

    /// The next whole reply, nullopt when more bytes are needed. Sets `failed()` on a protocol
    /// error.
    std::optional<Reply> next();

    /// Whether the stream was not RESP.
    [[nodiscard]] bool failed() const noexcept { return failed_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    bool failed_{false};
};

/// Where a Redis server is: `redis://[:password@]host[:port][/db]`, `rediss://…` (the same over
/// TLS: the server's certificate is verified against the host), `unix:///path[?db=N]`.
struct Url {
    /// The transport.
    enum class Kind : std::uint8_t { tcp, unix_socket, tls };

    Kind kind{Kind::tcp};     ///< the transport
    std::string host;         ///< tcp/tls: host name or address
    std::uint16_t port{6379}; ///< tcp/tls: port
    std::string path;         ///< unix: socket path
    std::string password;     ///< AUTH, when set
    unsigned db{0};           ///< SELECT, when not 0

    /// The URL without its password, for messages.
    [[nodiscard]] std::string display() const;
};

/// Parses a Redis URL. @return the reason (a message) when it is not one.
boost::system::result<Url, std::string> parse_url(std::string_view text);

} // namespace sluice::redis
