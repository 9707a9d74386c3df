// Web Push on OpenSSL: P-256 keys, RFC 8291 `aes128gcm` message encryption, RFC 8292 VAPID
// (ES256 JWT), base64url and the webhook HMAC. Sans-I/O but for the key file.
#pragma once

#include <sluice/hub/failure.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_pkey_st; // OpenSSL's EVP_PKEY, kept out of this header

namespace sluice::push {

using hub::Failure;
using hub::Result;

/// The record size of an encrypted message (RFC 8291 §4: one record of at most 4096 bytes).
inline constexpr std::uint32_t PUSH_RECORD_SIZE = 4096;

/// Most plaintext bytes one push carries: the record size less the header (86 bytes: salt 16,
/// rs 4, idlen 1, keyid 65), the tag (16) and the padding delimiter (1). RFC 8291 §4 says a
/// push service need accept no more than 4096 bytes of body.
inline constexpr std::size_t PUSH_MAX_PLAINTEXT = PUSH_RECORD_SIZE - 86 - 16 - 1;

/// The VAPID key file in a data dir (PEM, mode 0600).
inline constexpr std::string_view VAPID_KEY_FILE = "vapid.pem";

/// base64url without padding (RFC 4648 §5), as Web Push and JWT spell binary.
[[nodiscard]] std::string base64url(std::string_view bytes);

/// Decodes base64url (padding tolerated, also '+' and '/'); nothing when it is not base64.
[[nodiscard]] std::optional<std::string> from_base64url(std::string_view text);

/// Lowercase hex of HMAC-SHA256(key, data) (the webhooks' X-Sluice-Signature).
[[nodiscard]] std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// A P-256 key: a pair, or a public key alone.
///
/// @par Thread safety
/// Immutable once made: safe from any thread.
class EcKey {
public:
    /// A new random key pair.
    static Result<EcKey> generate();
    /// The public key of an uncompressed point (65 bytes, 0x04 || X || Y), checked to be on the
    /// curve. bad_request otherwise.
    static Result<EcKey> from_public(std::string_view point);
    /// A key pair from its private scalar (32 bytes) and its public point (tests, RFC vectors).
    static Result<EcKey> from_private(std::string_view scalar, std::string_view point);
    /// A key pair from PEM (PKCS#8 or SEC1).
    static Result<EcKey> from_pem(std::string_view pem);

    /// The public key as an uncompressed point (65 bytes).
    [[nodiscard]] const std::string& public_point() const noexcept { return point_; }

    /// The private key as PKCS#8 PEM. @pre a key pair.
    [[nodiscard]] Result<std::string> pem() const;
    /// ECDH with `peer`'s public key: the shared secret's X coordinate (32 bytes).
    [[nodiscard]] Result<std::string> derive(const EcKey& peer) const;
    /// An ES256 signature of `data` (JWS form: r || s, 64 bytes). @pre a key pair.
    [[nodiscard]] Result<std::string> sign_es256(std::string_view data) const;
    /// Whether `signature` (r || s, 64 bytes) is an ES256 signature of `data` by this key.
    [[nodiscard]] bool verify_es256(std::string_view data, std::string_view signature) const;

private:
    std::shared_ptr<evp_pkey_st> key_;
    std::string point_;
};

/// RFC 8291 §3-4: `plaintext` encrypted for a user agent's `ua_public` (65 bytes) and
/// `auth_secret` (16 bytes) with the sender's (ephemeral) `sender` key and `salt` (16 bytes):
/// the aes128gcm body (RFC 8188 header with rs 4096 and the sender's point as keyid, then one
/// record). bad_request: a key or salt of the wrong size, a plaintext over PUSH_MAX_PLAINTEXT.
[[nodiscard]] Result<std::string> encrypt_aes128gcm(
    std::string_view plaintext,
    std::string_view ua_public,
    std::string_view auth_secret,
    const EcKey& sender,
    std::string_view salt);

/// As above with a fresh sender key and a random salt (what every push uses).
[[nodiscard]] Result<std::string> encrypt_aes128gcm(
    std::string_view plaintext, std::string_view ua_public, std::string_view auth_secret);

/// The origin (scheme://host[:port]) of a push endpoint URL, the VAPID `aud`; nothing when
/// `url` is not an absolute http(s) URL.
[[nodiscard]] std::optional<std::string> endpoint_origin(std::string_view url);

/// RFC 8292 §2: a VAPID JWT (ES256) for `audience` (the endpoint's origin), expiring at
/// `expires` (Unix seconds; at most 24 h ahead), naming `subject` (mailto: or https:).
[[nodiscard]] Result<std::string> vapid_jwt(
    const EcKey& key, std::string_view audience, std::string_view subject, std::int64_t expires);

/// The data dir's VAPID key pair: read from VAPID_KEY_FILE, or made at first start and written
/// there (safe_write, mode 0600). `created` tells which. Blocking: at start-up only.
[[nodiscard]] Result<EcKey> vapid_key(const std::filesystem::path& data_dir, bool& created);

} // namespace sluice::push
