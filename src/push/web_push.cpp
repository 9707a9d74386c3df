// Web Push on OpenSSL: P-256 keys, RFC 8291 aes128gcm, RFC 8292 VAPID (push/web_push.hpp).
#include <sluice/core/safe_write.hpp>
#include <sluice/push/web_push.hpp>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <array>
#include <fstream>
#include <sstream>

namespace sluice::push {

namespace {

const auto* bytes_of(std::string_view s) noexcept {
    return reinterpret_cast<const unsigned char*>(s.data());
}

Failure bad(std::string why) {
    return Failure::of(errc::bad_request, std::move(why));
}

Failure broken(std::string why) {
    return Failure::of(errc::io_error, "OpenSSL: " + std::move(why));
}

template <class T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const noexcept { Free(p); }
};

using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, Deleter<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using ParamBld = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using Bn = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using Sig = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG, ECDSA_SIG_free>>;

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* k) {
    return {k, EVP_PKEY_free};
}

// The uncompressed public point of `k`, or "" when it has none of 65 bytes.
std::string point_of(EVP_PKEY* k) {
    std::array<unsigned char, 133> buf{};
    std::size_t len = 0;
    if (EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, buf.data(), buf.size(), &len)
            != 1
        || len != 65 || buf[0] != 0x04) {
        return {};
    }
    return {reinterpret_cast<const char*>(buf.data()), len};
}

// A P-256 key from its public point and (when not empty) its private scalar.
Result<std::shared_ptr<evp_pkey_st>> from_data(std::string_view scalar, std::string_view point) {
    if (point.size() != 65 || static_cast<unsigned char>(point[0]) != 0x04) {
        return bad("a P-256 public key is an uncompressed point of 65 bytes starting 0x04");
    }
    ParamBld bld(OSSL_PARAM_BLD_new());
    Bn d;
    if (!bld
        || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0)
               != 1
        || OSSL_PARAM_BLD_push_octet_string(
               bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size())
               != 1) {
        return broken("cannot build key parameters");
    }
    if (!scalar.empty()) {
        d.reset(BN_bin2bn(bytes_of(scalar), static_cast<int>(scalar.size()), nullptr));
        if (!d || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, d.get()) != 1) {
            return broken("cannot build key parameters");
        }
    }
    Params params(OSSL_PARAM_BLD_to_param(bld.get()));
    PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    EVP_PKEY* k = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1
        || EVP_PKEY_fromdata(
               ctx.get(), &k, scalar.empty() ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEYPAIR, params.get())
               != 1) {
        return bad("not a point on the P-256 curve");
    }
    auto key = own(k);
    PkeyCtx check(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
    if (!check || EVP_PKEY_public_check(check.get()) != 1) {
        return bad("not a point on the P-256 curve");
    }
    return key;
}

std::string hmac(std::string_view key, std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned len = 0;
    HMAC(
        EVP_sha256(),
        key.data(),
        static_cast<int>(key.size()),
        bytes_of(data),
        data.size(),
        out.data(),
        &len);
    return {reinterpret_cast<const char*>(out.data()), len};
}

std::string random_bytes(std::size_t n) {
    std::string s(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(s.data()), static_cast<int>(n)) != 1) {
        return {};
    }
    return s;
}

constexpr std::string_view B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int b64_value(char c) noexcept {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '-' || c == '+') {
        return 62;
    }
    if (c == '_' || c == '/') {
        return 63;
    }
    return -1;
}

} // namespace

std::string base64url(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char ch : bytes) {
        acc = (acc << 8U) | static_cast<unsigned char>(ch);
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += B64[(acc >> static_cast<unsigned>(bits)) & 0x3FU];
        }
    }
    if (bits > 0) {
        out += B64[(acc << static_cast<unsigned>(6 - bits)) & 0x3FU];
    }
    return out;
}

std::optional<std::string> from_base64url(std::string_view text) {
    while (!text.empty() && text.back() == '=') {
        text.remove_suffix(1);
    }
    if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char c : text) {
        const int v = b64_value(c);
        if (v < 0) {
            return std::nullopt;
        }
        acc = (acc << 6U) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> static_cast<unsigned>(bits)) & 0xFFU);
        }
    }
    return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
    static constexpr std::string_view HEX = "0123456789abcdef";
    std::string out;
    for (const char c : hmac(key, data)) {
        const auto b = static_cast<unsigned char>(c);
        out += HEX[b >> 4U];
        out += HEX[b & 0x0FU];
    }
    return out;
}

// ---- EcKey -------------------------------------------------------------------------------

Result<EcKey> EcKey::generate() {
    EVP_PKEY* k = EVP_EC_gen("P-256");
    if (k == nullptr) {
        return broken("cannot generate a P-256 key");
    }
    EcKey key;
    key.key_ = own(k);
    key.point_ = point_of(k);
    if (key.point_.empty()) {
        return broken("a generated key has no public point");
    }
    return key;
}

Result<EcKey> EcKey::from_public(std::string_view point) {
    auto k = from_data({}, point);
    if (!k) {
        return k.error();
    }
    EcKey key;
    key.key_ = std::move(*k);
    key.point_ = std::string(point);
    return key;
}

Result<EcKey> EcKey::from_private(std::string_view scalar, std::string_view point) {
    if (scalar.size() != 32) {
        return bad("a P-256 private key is 32 bytes");
    }
    auto k = from_data(scalar, point);
    if (!k) {
        return k.error();
    }
    EcKey key;
    key.key_ = std::move(*k);
    key.point_ = std::string(point);
    return key;
}

Result<EcKey> EcKey::from_pem(std::string_view pem) {
    Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    EVP_PKEY* k = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (k == nullptr) {
        return Failure::of(errc::corrupt_data, "not a PEM private key");
    }
    EcKey key;
    key.key_ = own(k);
    key.point_ = point_of(k);
    if (!EVP_PKEY_is_a(k, "EC") || key.point_.empty()) {
        return Failure::of(errc::corrupt_data, "not a P-256 key");
    }
    return key;
}

Result<std::string> EcKey::pem() const {
    Bio bio(BIO_new(BIO_s_mem()));
    if (!bio
        || PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr)
               != 1) {
        return broken("cannot write the key as PEM");
    }
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(len));
}

Result<std::string> EcKey::derive(const EcKey& peer) const {
    PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
    std::size_t len = 0;
    if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1
        || EVP_PKEY_derive_set_peer(ctx.get(), peer.key_.get()) != 1
        || EVP_PKEY_derive(ctx.get(), nullptr, &len) != 1) {
        return broken("ECDH failed");
    }
    std::string out(len, '\0');
    if (EVP_PKEY_derive(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len) != 1) {
        return broken("ECDH failed");
    }
    out.resize(len);
    return out;
}

Result<std::string> EcKey::sign_es256(std::string_view data) const {
    MdCtx md(EVP_MD_CTX_new());
    std::size_t len = 0;
    if (!md || EVP_DigestSignInit(md.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1
        || EVP_DigestSign(md.get(), nullptr, &len, bytes_of(data), data.size()) != 1) {
        return broken("cannot sign");
    }
    std::string der(len, '\0');
    if (EVP_DigestSign(
            md.get(),
            reinterpret_cast<unsigned char*>(der.data()),
            &len,
            bytes_of(data),
            data.size())
        != 1) {
        return broken("cannot sign");
    }
    const auto* p = bytes_of(der);
    Sig sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len)));
    if (!sig) {
        return broken("cannot read a signature");
    }
    const BIGNUM* r = nullptr;
    const BIGNUM* s = nullptr;
    ECDSA_SIG_get0(sig.get(), &r, &s);
    std::string out(64, '\0');
    auto* o = reinterpret_cast<unsigned char*>(out.data());
    if (BN_bn2binpad(r, o, 32) != 32 || BN_bn2binpad(s, o + 32, 32) != 32) {
        return broken("cannot write a signature");
    }
    return out;
}

bool EcKey::verify_es256(std::string_view data, std::string_view signature) const {
    if (signature.size() != 64) {
        return false;
    }
    Sig sig(ECDSA_SIG_new());
    BIGNUM* r = BN_bin2bn(bytes_of(signature), 32, nullptr);
    BIGNUM* s = BN_bin2bn(bytes_of(signature) + 32, 32, nullptr);
    if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
        BN_free(r);
        BN_free(s);
        return false;
    }
    unsigned char* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig.get(), &der);
    if (len <= 0) {
        return false;
    }
    MdCtx md(EVP_MD_CTX_new());
    const bool ok =
        md && EVP_DigestVerifyInit(md.get(), nullptr, EVP_sha256(), nullptr, key_.get()) == 1
        && EVP_DigestVerify(
               md.get(), der, static_cast<std::size_t>(len), bytes_of(data), data.size())
               == 1;
    OPENSSL_free(der);
    return ok;
}

// ---- RFC 8291 ----------------------------------------------------------------------------

Result<std::string> encrypt_aes128gcm(
    std::string_view plaintext,
    std::string_view ua_public,
    std::string_view auth_secret,
    const EcKey& sender,
    std::string_view salt) {
    if (auth_secret.size() != 16) {
        return bad("the auth secret must be 16 bytes");
    }
    if (salt.size() != 16) {
        return bad("the salt must be 16 bytes");
    }
    if (plaintext.size() > PUSH_MAX_PLAINTEXT) {
        return bad("a push message holds at most " + std::to_string(PUSH_MAX_PLAINTEXT) + " bytes");
    }
    auto ua = EcKey::from_public(ua_public);
    if (!ua) {
        return ua.error();
    }
    auto ecdh = sender.derive(*ua);
    if (!ecdh) {
        return ecdh.error();
    }
    // §3.3-3.4: the auth secret and both public keys mixed into the input keying material.
    const auto prk_key = hmac(auth_secret, *ecdh);
    std::string key_info = "WebPush: info";
    key_info += '\0';
    key_info += ua_public;
    key_info += sender.public_point();
    key_info += '\x01';
    const auto ikm = hmac(prk_key, key_info);
    // RFC 8188 §2.2-2.3: the content encryption key and nonce (one record: sequence 0).
    const auto prk = hmac(salt, ikm);
    const std::string cek_info("Content-Encoding: aes128gcm\0\x01", 29);
    const std::string nonce_info("Content-Encoding: nonce\0\x01", 25);
    const auto cek = hmac(prk, cek_info).substr(0, 16);
    const auto nonce = hmac(prk, nonce_info).substr(0, 12);

    std::string record(plaintext);
    record += '\x02'; // the last record's delimiter, no padding
    std::string out(salt);
    out += static_cast<char>((PUSH_RECORD_SIZE >> 24U) & 0xFFU);
    out += static_cast<char>((PUSH_RECORD_SIZE >> 16U) & 0xFFU);
    out += static_cast<char>((PUSH_RECORD_SIZE >> 8U) & 0xFFU);
    out += static_cast<char>(PUSH_RECORD_SIZE & 0xFFU);
    out += static_cast<char>(sender.public_point().size());
    out += sender.public_point();
    const auto head = out.size();
    out.resize(head + record.size() + 16);
    auto* o = reinterpret_cast<unsigned char*>(out.data()) + head;
    CipherCtx c(EVP_CIPHER_CTX_new());
    int len = 0;
    int fin = 0;
    if (!c || EVP_EncryptInit_ex(c.get(), EVP_aes_128_gcm(), nullptr, nullptr, nullptr) != 1
        || EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) != 1
        || EVP_EncryptInit_ex(c.get(), nullptr, nullptr, bytes_of(cek), bytes_of(nonce)) != 1
        || EVP_EncryptUpdate(c.get(), o, &len, bytes_of(record), static_cast<int>(record.size()))
               != 1
        || EVP_EncryptFinal_ex(c.get(), o + len, &fin) != 1
        || EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_GET_TAG, 16, o + len + fin) != 1) {
        return broken("AES-128-GCM failed");
    }
    return out;
}

Result<std::string> encrypt_aes128gcm(
    std::string_view plaintext, std::string_view ua_public, std::string_view auth_secret) {
    auto sender = EcKey::generate();
    if (!sender) {
        return sender.error();
    }
    const auto salt = random_bytes(16);
    if (salt.empty()) {
        return broken("no random bytes");
    }
    return encrypt_aes128gcm(plaintext, ua_public, auth_secret, *sender, salt);
}

// ---- RFC 8292 ----------------------------------------------------------------------------

std::optional<std::string> endpoint_origin(std::string_view url) {
    auto u = boost::urls::parse_absolute_uri(url);
    if (!u || (u->scheme() != "http" && u->scheme() != "https") || u->encoded_host().empty()) {
        return std::nullopt;
    }
    return std::string(u->scheme()) + "://" + std::string(u->encoded_host_and_port());
}

Result<std::string> vapid_jwt(
    const EcKey& key, std::string_view audience, std::string_view subject, std::int64_t expires) {
    const std::string head = base64url(R"({"typ":"JWT","alg":"ES256"})");
    const std::string claims = base64url(boost::json::serialize(
        boost::json::object{{"aud", audience}, {"exp", expires}, {"sub", subject}}));
    const std::string signing = head + "." + claims;
    auto sig = key.sign_es256(signing);
    if (!sig) {
        return sig.error();
    }
    return signing + "." + base64url(*sig);
}

Result<EcKey> vapid_key(const std::filesystem::path& data_dir, bool& created) {
    created = false;
    const auto path = data_dir / VAPID_KEY_FILE;
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        if (!in) {
            return Failure::of(errc::io_error, "cannot read " + path.string());
        }
        auto key = EcKey::from_pem(text.str());
        if (!key) {
            return Failure::of(errc::corrupt_data, path.string() + ": " + key.error().message);
        }
        return key;
    }
    auto key = EcKey::generate();
    if (!key) {
        return key.error();
    }
    auto pem = key->pem();
    if (!pem) {
        return pem.error();
    }
    if (auto w = safe_write(path, *pem, 0600); !w) {
        return Failure::of(
            write_errc(w.error()), "cannot write " + path.string() + ": " + w.error().message());
    }
    created = true;
    return key;
}

} // namespace sluice::push
