// Tokens: the owner token in the data dir, viewer tokens stored hashed, and the keyring a server
// checks a presented token against (digests compared in constant time).
#pragma once

#include <boost/system/result.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::auth {

/// The owner token's file in a data dir (mode 0600, one line).
inline constexpr std::string_view OWNER_TOKEN_FILE = "token";

/// The viewer tokens' file in a data dir: their digests, never the tokens.
inline constexpr std::string_view VIEWER_TOKENS_FILE = "tokens.json";

/// A SHA-256 digest.
using Digest = std::array<unsigned char, 32>;

/// The SHA-256 digest of `token`.
[[nodiscard]] Digest digest(std::string_view token) noexcept;

/// Whether two digests are equal, in time independent of where they differ. Comparing fixed-size
/// digests (never the tokens themselves) also hides the presented token's length.
[[nodiscard]] bool digest_equal(const Digest& a, const Digest& b) noexcept;

/// A new random token: 256 bits from the OS's CSPRNG, as 64 lowercase hex digits.
/// @throws std::runtime_error when the CSPRNG fails (start-up only)
[[nodiscard]] std::string random_token();

/// Hex of `d` (64 digits).
[[nodiscard]] std::string hex(const Digest& d);

/// The owner token kept in `data_dir`, if the file exists and can be read (surrounding
/// whitespace trimmed). Used by the CLI to find the token of a hub whose data dir it can read.
[[nodiscard]] std::optional<std::string> read_owner_token(const std::filesystem::path& data_dir);

/// The owner token of `data_dir`: read, or created at first start (random_token(), written with
/// safe_write at mode 0600). `created` tells which. Errors: the file cannot be read or written.
[[nodiscard]] boost::system::result<std::string>
owner_token(const std::filesystem::path& data_dir, bool& created);

/// Who holds a token.
enum class Role : std::uint8_t {
    owner,  ///< may do everything
    viewer, ///< may watch (lists, streams, history, frames), never act
};

/// A viewer token as stored: its digest, never the token.
struct ViewerToken {
    std::string id;          ///< short public name, for `token list|revoke`
    std::string digest_hex;  ///< SHA-256 of the token, hex
    std::string seat;        ///< the one seat it may watch; empty: every seat
    std::int64_t created{0}; ///< Unix seconds
    std::int64_t expires{0}; ///< Unix seconds; 0: never
};

/// The viewer tokens stored in `data_dir` (none when the file does not exist). Errors: the file
/// exists but cannot be read or is not what sluice writes (errc::corrupt_data).
[[nodiscard]] boost::system::result<std::vector<ViewerToken>>
read_viewers(const std::filesystem::path& data_dir);

/// A viewer token just minted: the token (shown once) and what is stored of it.
struct Minted {
    std::string token;
    ViewerToken entry;
};

/// Mints a viewer token for `seat` (empty: every seat) living `ttl` (zero: until revoked) and
/// stores its digest in `data_dir` (safe_write, mode 0600). A running hub sees it at its next
/// request.
[[nodiscard]] boost::system::result<Minted>
mint_viewer(const std::filesystem::path& data_dir, std::string seat, std::chrono::seconds ttl);

/// Removes the viewer token named `id` (its id, or a unique prefix of at least 4 characters).
/// @return whether one was removed
[[nodiscard]] boost::system::result<bool>
revoke_viewer(const std::filesystem::path& data_dir, std::string_view id);

/// Parses a lifetime: a positive integer followed by s, m, h or d ("24h", "90m", "7d").
[[nodiscard]] std::optional<std::chrono::seconds> parse_duration(std::string_view text);

/// What a token grants.
struct Grant {
    Role role{Role::owner};
    std::string seat; ///< viewer tokens: the one seat; empty: every seat
};

/// The outcome of checking a token: a grant, or why not (a message for the 401).
struct Verdict {
    std::optional<Grant> grant;
    std::string why;
};

/// The tokens a server accepts: the owner token's digest and the viewer tokens of a data dir,
/// re-read when their file changes (a `sluice token new|revoke` takes effect at the next
/// request, without a restart).
///
/// @par Thread safety
/// `check` is safe from any thread (a mutex guards the viewer list; no I/O but a `stat`, and a
/// small read when the file changed).
class Keyring {
public:
    /// Accepts `owner` (empty: no token is required) and the viewer tokens in `viewer_dir`
    /// (empty path: none).
    Keyring(std::string_view owner, std::filesystem::path viewer_dir);

    /// Whether requests need a token at all.
    [[nodiscard]] bool required() const noexcept { return required_; }

    /// Checks `token` at `now_unix` (Unix seconds). Every stored digest is compared, in constant
    /// time, whatever matches first.
    [[nodiscard]] Verdict check(std::string_view token, std::int64_t now_unix);

private:
    void reload_if_changed();

    bool required_;
    Digest owner_{};
    std::filesystem::path dir_;
    std::mutex mu_;
    std::vector<std::pair<Digest, ViewerToken>> viewers_; // guarded by mu_
    std::string stamp_;                                   // the file's identity when read
};

} // namespace sluice::server::auth
