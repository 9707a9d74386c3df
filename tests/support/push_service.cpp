// Test support: loopback receiver, RFC 8291 decryption, VAPID check (push_service.hpp).
#include "support/push_service.hpp"

#include <boost/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace sluice::test {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string hmac(const std::string& key, const std::string& data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned len = 0;
    HMAC(
        EVP_sha256(),
        key.data(),
        static_cast<int>(key.size()),
        reinterpret_cast<const unsigned char*>(data.data()),
        data.size(),
        out.data(),
        &len);
    return {reinterpret_cast<const char*>(out.data()), len};
}

} // namespace

// ---- LoopbackReceiver --------------------------------------------------------------------

LoopbackReceiver::LoopbackReceiver() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
        || ::listen(listen_fd_, 64) != 0) {
        throw std::runtime_error("cannot listen on 127.0.0.1:0");
    }
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
}

LoopbackReceiver::~LoopbackReceiver() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        hang_ = false;
    }
    cv_.notify_all();
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    for (auto& t : conns_) {
        t.join();
    }
}

std::string LoopbackReceiver::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void LoopbackReceiver::script(std::vector<unsigned> statuses) {
    std::lock_guard lock(mu_);
    script_.assign(statuses.begin(), statuses.end());
}

void LoopbackReceiver::default_status(unsigned status) {
    std::lock_guard lock(mu_);
    default_ = status;
}

void LoopbackReceiver::hang(bool on) {
    {
        std::lock_guard lock(mu_);
        hang_ = on;
    }
    cv_.notify_all();
}

std::vector<Received> LoopbackReceiver::received() const {
    std::lock_guard lock(mu_);
    return received_;
}

bool LoopbackReceiver::wait_for(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return received_.size() >= n; });
}

void LoopbackReceiver::accept_loop() {
    for (;;) {
        const int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd < 0) {
            return; // shut down
        }
        std::lock_guard lock(mu_);
        if (stopping_) {
            ::close(fd);
            return;
        }
        conns_.emplace_back([this, fd] { serve(fd); });
    }
}

void LoopbackReceiver::serve(int fd) {
    timeval tv{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string in;
    std::array<char, 8192> buf{};
    std::size_t head_end = std::string::npos;
    while (head_end == std::string::npos) {
        const auto n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            ::close(fd);
            return;
        }
        in.append(buf.data(), static_cast<std::size_t>(n));
        head_end = in.find("\r\n\r\n");
    }
    Received r;
    std::size_t pos = in.find("\r\n");
    const std::string first = in.substr(0, pos);
    const auto sp1 = first.find(' ');
    const auto sp2 = first.find(' ', sp1 + 1);
    r.method = first.substr(0, sp1);
    r.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    while (pos < head_end) {
        const auto next = in.find("\r\n", pos + 2);
        const std::string line = in.substr(pos + 2, next - pos - 2);
        if (const auto colon = line.find(':'); colon != std::string::npos) {
            r.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
        }
        pos = next;
    }
    const auto length = static_cast<std::size_t>(std::stoul(
        r.headers.contains("content-length") ? r.headers["content-length"] : std::string("0")));
    r.body = in.substr(head_end + 4);
    while (r.body.size() < length) {
        const auto n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            break;
        }
        r.body.append(buf.data(), static_cast<std::size_t>(n));
    }
    unsigned status = 0;
    {
        std::unique_lock lock(mu_);
        received_.push_back(r);
        cv_.notify_all();
        cv_.wait(lock, [&] { return !hang_ || stopping_; });
        if (!script_.empty()) {
            status = script_.front();
            script_.pop_front();
        } else {
            status = default_;
        }
    }
    const std::string res = "HTTP/1.1 " + std::to_string(status)
                            + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)::send(fd, res.data(), res.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
}

// ---- BrowserKeys -------------------------------------------------------------------------

BrowserKeys BrowserKeys::make() {
    std::string auth(16, '\0');
    RAND_bytes(reinterpret_cast<unsigned char*>(auth.data()), 16);
    return BrowserKeys{push::EcKey::generate().value(), auth};
}

std::string BrowserKeys::subscription_json(const std::string& endpoint) const {
    return boost::json::serialize(boost::json::object{
        {"endpoint", endpoint},
        {"expirationTime", nullptr},
        {"keys",
         {{"p256dh", push::base64url(key.public_point())}, {"auth", push::base64url(auth)}}}});
}

// ---- RFC 8291, the user agent's side ------------------------------------------------------

std::optional<std::string>
decrypt_push(const std::string& body, const BrowserKeys& keys, std::string* why) {
    auto fail = [why](const char* what) -> std::optional<std::string> {
        if (why != nullptr) {
            *why = what;
        }
        return std::nullopt;
    };
    // RFC 8188 §2.1: salt (16) | rs (4) | idlen (1) | keyid (idlen) | records.
    if (body.size() < 21) {
        return fail("shorter than the aes128gcm header");
    }
    const std::string salt = body.substr(0, 16);
    const auto idlen = static_cast<unsigned char>(body[20]);
    if (idlen != 65 || body.size() < 21U + idlen + 16U) {
        return fail("keyid is not a 65-byte P-256 point");
    }
    const std::string as_public = body.substr(21, idlen);
    const std::string record = body.substr(21U + idlen);
    auto sender = push::EcKey::from_public(as_public);
    if (!sender) {
        return fail("keyid is not on the curve");
    }
    auto shared = keys.key.derive(*sender);
    if (!shared) {
        return fail("ECDH failed");
    }
    std::string info("WebPush: info", 13);
    info += '\0';
    info += keys.key.public_point();
    info += as_public;
    info += '\x01';
    const auto ikm = hmac(hmac(keys.auth, *shared), info);
    const auto prk = hmac(salt, ikm);
    std::string cek_info("Content-Encoding: aes128gcm", 27);
    cek_info += '\0';
    cek_info += '\x01';
    std::string nonce_info("Content-Encoding: nonce", 23);
    nonce_info += '\0';
    nonce_info += '\x01';
    const auto cek = hmac(prk, cek_info).substr(0, 16);
    const auto nonce = hmac(prk, nonce_info).substr(0, 12);
    const std::string ct = record.substr(0, record.size() - 16);
    std::string tag = record.substr(record.size() - 16);
    std::string out(ct.size(), '\0');
    EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
    int len = 0;
    int fin = 0;
    const bool ok =
        EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), nullptr, nullptr, nullptr) == 1
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1
        && EVP_DecryptInit_ex(
               c,
               nullptr,
               nullptr,
               reinterpret_cast<const unsigned char*>(cek.data()),
               reinterpret_cast<const unsigned char*>(nonce.data()))
               == 1
        && EVP_DecryptUpdate(
               c,
               reinterpret_cast<unsigned char*>(out.data()),
               &len,
               reinterpret_cast<const unsigned char*>(ct.data()),
               static_cast<int>(ct.size()))
               == 1
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag.data()) == 1
        && EVP_DecryptFinal_ex(c, reinterpret_cast<unsigned char*>(out.data()) + len, &fin) == 1;
    EVP_CIPHER_CTX_free(c);
    if (!ok) {
        return fail("the tag does not verify");
    }
    // RFC 8188 §2: the last record ends in 0x02 then zero padding.
    while (!out.empty() && out.back() == '\0') {
        out.pop_back();
    }
    if (out.empty() || out.back() != '\x02') {
        return fail("no last-record delimiter");
    }
    out.pop_back();
    return out;
}

std::string check_vapid(
    const std::string& authorization,
    const std::string& public_key_b64,
    const std::string& audience) {
    const std::string t_at = "vapid t=";
    if (authorization.rfind(t_at, 0) != 0) {
        return "not a vapid Authorization: " + authorization;
    }
    const auto comma = authorization.find(", k=");
    if (comma == std::string::npos) {
        return "no k= in " + authorization;
    }
    const std::string jwt = authorization.substr(t_at.size(), comma - t_at.size());
    const std::string k = authorization.substr(comma + 4);
    if (k != public_key_b64) {
        return "k= is not the hub's public key";
    }
    const auto point = push::from_base64url(public_key_b64);
    if (!point) {
        return "the hub's public key is not base64url";
    }
    auto key = push::EcKey::from_public(*point);
    if (!key) {
        return "the hub's public key is not a P-256 point";
    }
    const auto dot1 = jwt.find('.');
    const auto dot2 = jwt.rfind('.');
    if (dot1 == std::string::npos || dot1 == dot2) {
        return "not a JWT";
    }
    const auto sig = push::from_base64url(jwt.substr(dot2 + 1));
    if (!sig || !key->verify_es256(jwt.substr(0, dot2), *sig)) {
        return "the JWT's signature does not verify against the hub's key";
    }
    const auto head = push::from_base64url(jwt.substr(0, dot1));
    const auto claims = push::from_base64url(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
    if (!head || !claims) {
        return "JWT parts are not base64url";
    }
    const auto h = boost::json::parse(*head);
    if (h.at("alg") != "ES256") {
        return "alg is not ES256";
    }
    const auto c = boost::json::parse(*claims);
    if (c.at("aud").as_string() != audience) {
        return "aud is " + boost::json::serialize(c.at("aud")) + ", not " + audience;
    }
    const auto exp = c.at("exp").to_number<std::int64_t>();
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    if (exp <= now || exp > now + 24 * 3600) {
        return "exp is not within 24 h";
    }
    const std::string sub(c.at("sub").as_string());
    if (sub.rfind("mailto:", 0) != 0 && sub.rfind("https:", 0) != 0) {
        return "sub is neither mailto: nor https:";
    }
    return {};
}

} // namespace sluice::test
