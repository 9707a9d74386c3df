// Unit tests of push/web_push.hpp: RFC 8291's worked example byte for byte, a round trip through
// the browser's side, VAPID JWTs verified with OpenSSL, the key file (0600, reused).
#include "support/push_service.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/push/web_push.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>

namespace {

using namespace sluice;
using sluice::test::TempDir;

std::string b64(std::string_view s) {
    return push::from_base64url(s).value();
}

// RFC 8291 Appendix A.
constexpr std::string_view PLAINTEXT = "When I grow up, I want to be a watermelon";
constexpr std::string_view AS_PRIVATE = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
constexpr std::string_view AS_PUBLIC =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
constexpr std::string_view UA_PRIVATE = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
constexpr std::string_view UA_PUBLIC =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr std::string_view SALT = "DGv6ra1nlYgDCS1FRnbzlw";
constexpr std::string_view AUTH = "BTBZMqHH6r4Tts7J_aSIgg";
constexpr std::string_view BODY =
    "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6"
    "TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy"
    "4a-fN";

TEST(WebPush, ReproducesTheRfc8291ExampleByteForByte) {
    auto sender = push::EcKey::from_private(b64(AS_PRIVATE), b64(AS_PUBLIC));
    ASSERT_TRUE(sender) << sender.error().message;
    auto body = push::encrypt_aes128gcm(PLAINTEXT, b64(UA_PUBLIC), b64(AUTH), *sender, b64(SALT));
    ASSERT_TRUE(body) << body.error().message;
    EXPECT_EQ(push::base64url(*body), BODY);
}

TEST(WebPush, TheRfc8291ExampleDecryptsWithTheUserAgentsKey) {
    test::BrowserKeys ua{
        push::EcKey::from_private(b64(UA_PRIVATE), b64(UA_PUBLIC)).value(), b64(AUTH)};
    std::string why;
    auto text = test::decrypt_push(b64(BODY), ua, &why);
    ASSERT_TRUE(text) << why;
    EXPECT_EQ(*text, PLAINTEXT);
}

TEST(WebPush, AFreshKeyAndSaltRoundTripThroughTheBrowsersSide) {
    const auto ua = test::BrowserKeys::make();
    const std::string payload = R"({"kind":"permission","seat":"s-1"})";
    auto one = push::encrypt_aes128gcm(payload, ua.key.public_point(), ua.auth);
    auto two = push::encrypt_aes128gcm(payload, ua.key.public_point(), ua.auth);
    ASSERT_TRUE(one && two);
    EXPECT_NE(*one, *two); // a new sender key and salt each time
    EXPECT_EQ(test::decrypt_push(*one, ua).value_or(""), payload);
    auto other = test::BrowserKeys::make();
    EXPECT_FALSE(test::decrypt_push(*one, other)); // another browser cannot read it
}

TEST(WebPush, RefusesBadKeysAndOversizedPlaintext) {
    const auto ua = test::BrowserKeys::make();
    EXPECT_FALSE(push::encrypt_aes128gcm("x", ua.key.public_point().substr(1), ua.auth));
    EXPECT_FALSE(push::encrypt_aes128gcm("x", ua.key.public_point(), "short"));
    std::string off_curve = ua.key.public_point();
    off_curve[40] = static_cast<char>(off_curve[40] ^ 0x01);
    EXPECT_FALSE(push::EcKey::from_public(off_curve));
    EXPECT_FALSE(push::encrypt_aes128gcm(
        std::string(push::PUSH_MAX_PLAINTEXT + 1, 'x'), ua.key.public_point(), ua.auth));
    EXPECT_TRUE(push::encrypt_aes128gcm(
        std::string(push::PUSH_MAX_PLAINTEXT, 'x'), ua.key.public_point(), ua.auth));
}

TEST(WebPush, Base64urlRoundTripsEveryLength) {
    std::string bytes;
    for (int i = 0; i < 70; ++i) {
        EXPECT_EQ(push::from_base64url(push::base64url(bytes)).value(), bytes);
        bytes += static_cast<char>(i * 37);
    }
    EXPECT_EQ(push::base64url("\xfb\xff"), "-_8");
    EXPECT_FALSE(push::from_base64url("a"));
    EXPECT_FALSE(push::from_base64url("ab$d"));
}

TEST(WebPush, EndpointOriginIsSchemeHostAndPort) {
    EXPECT_EQ(
        push::endpoint_origin("https://fcm.googleapis.com/fcm/send/abc").value(),
        "https://fcm.googleapis.com");
    EXPECT_EQ(
        push::endpoint_origin("http://127.0.0.1:8080/p/1?x").value(), "http://127.0.0.1:8080");
    EXPECT_FALSE(push::endpoint_origin("ftp://x/y"));
    EXPECT_FALSE(push::endpoint_origin("/relative"));
}

// Verifies an ES256 JWS signature (r || s) with OpenSSL alone, from the raw public point.
bool openssl_verifies(const std::string& point, const std::string& data, const std::string& sig) {
    OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
    OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX* pctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
    EVP_PKEY* pkey = nullptr;
    EVP_PKEY_fromdata_init(pctx);
    EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
    const auto* s = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* es = ECDSA_SIG_new();
    ECDSA_SIG_set0(es, BN_bin2bn(s, 32, nullptr), BN_bin2bn(s + 32, 32, nullptr));
    unsigned char* der = nullptr;
    const int len = i2d_ECDSA_SIG(es, &der);
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    const bool ok = pkey != nullptr
                    && EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, pkey) == 1
                    && EVP_DigestVerify(
                           md,
                           der,
                           static_cast<std::size_t>(len),
                           reinterpret_cast<const unsigned char*>(data.data()),
                           data.size())
                           == 1;
    EVP_MD_CTX_free(md);
    OPENSSL_free(der);
    ECDSA_SIG_free(es);
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return ok;
}

TEST(Vapid, TheJwtVerifiesWithOpenSslAgainstThePublicKey) {
    auto key = push::EcKey::generate().value();
    const auto exp = static_cast<std::int64_t>(std::time(nullptr)) + 3600;
    auto jwt = push::vapid_jwt(key, "https://push.example.net", "mailto:ops@example.org", exp);
    ASSERT_TRUE(jwt);
    const auto dot2 = jwt->rfind('.');
    const auto dot1 = jwt->find('.');
    const auto sig = push::from_base64url(jwt->substr(dot2 + 1)).value();
    ASSERT_EQ(sig.size(), 64U);
    EXPECT_TRUE(openssl_verifies(key.public_point(), jwt->substr(0, dot2), sig));
    EXPECT_FALSE(openssl_verifies(key.public_point(), jwt->substr(0, dot2) + "x", sig));
    const auto head = boost::json::parse(push::from_base64url(jwt->substr(0, dot1)).value());
    EXPECT_EQ(head.at("alg"), "ES256");
    EXPECT_EQ(head.at("typ"), "JWT");
    const auto claims =
        boost::json::parse(push::from_base64url(jwt->substr(dot1 + 1, dot2 - dot1 - 1)).value());
    EXPECT_EQ(claims.at("aud"), "https://push.example.net");
    EXPECT_EQ(claims.at("sub"), "mailto:ops@example.org");
    EXPECT_EQ(claims.at("exp").as_int64(), exp);
    // The header a push service checks.
    EXPECT_EQ(
        test::check_vapid(
            "vapid t=" + *jwt + ", k=" + push::base64url(key.public_point()),
            push::base64url(key.public_point()),
            "https://push.example.net"),
        "");
}

TEST(Vapid, TheKeyFileIsMadeOnceWithMode0600AndReused) {
    TempDir dir;
    bool created = false;
    auto first = push::vapid_key(dir.path(), created);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_TRUE(created);

    struct stat st {};

    ASSERT_EQ(::stat((std::filesystem::path(dir.path()) / push::VAPID_KEY_FILE).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777U, 0600U);
    auto again = push::vapid_key(dir.path(), created);
    ASSERT_TRUE(again);
    EXPECT_FALSE(created);
    EXPECT_EQ(again->public_point(), first->public_point());
    // The reloaded key signs what the first key's public point verifies.
    auto sig = again->sign_es256("data").value();
    EXPECT_TRUE(first->verify_es256("data", sig));
}

TEST(WebPush, HmacIsTheRfc4231Vector) {
    // RFC 4231 test case 2.
    EXPECT_EQ(
        push::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

} // namespace
