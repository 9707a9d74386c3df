// Tokens: the owner token file, the viewer token store, and the keyring (constant-time digests).
#include <sluice/core/error.hpp>
#include <sluice/core/safe_write.hpp>
#include <sluice/server/auth.hpp>

#include <boost/json.hpp>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sluice::server::auth {

namespace json = boost::json;

namespace {

std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::optional<std::string> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return std::nullopt;
    }
    return std::move(ss).str();
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) {
        return {};
    }
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::optional<Digest> digest_from_hex(std::string_view h) {
    if (h.size() != 64) {
        return std::nullopt;
    }
    Digest d{};
    for (std::size_t i = 0; i < 32; ++i) {
        unsigned v = 0;
        for (std::size_t k = 0; k < 2; ++k) {
            const char c = h[2 * i + k];
            v <<= 4U;
            if (c >= '0' && c <= '9') {
                v |= static_cast<unsigned>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v |= static_cast<unsigned>(c - 'a' + 10);
            } else {
                return std::nullopt;
            }
        }
        d[i] = static_cast<unsigned char>(v);
    }
    return d;
}

std::filesystem::path viewers_path(const std::filesystem::path& dir) {
    return dir / std::string(VIEWER_TOKENS_FILE);
}

boost::system::result<void>
write_viewers(const std::filesystem::path& dir, const std::vector<ViewerToken>& v) {
    json::array arr;
    for (const auto& t : v) {
        arr.push_back(json::object{
            {"id", t.id},
            {"sha256", t.digest_hex},
            {"seat", t.seat},
            {"created", t.created},
            {"expires", t.expires}});
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return safe_write(
        viewers_path(dir), json::serialize(json::object{{"tokens", std::move(arr)}}) + "\n", 0600);
}

} // namespace

Digest digest(std::string_view token) noexcept {
    Digest d{};
    SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
    return d;
}

bool digest_equal(const Digest& a, const Digest& b) noexcept {
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string hex(const Digest& d) {
    static constexpr char DIGITS[] = "0123456789abcdef";
    std::string out;
    out.reserve(d.size() * 2);
    for (const unsigned char c : d) {
        out += DIGITS[c >> 4U];
        out += DIGITS[c & 0xFU];
    }
    return out;
}

std::string random_token() {
    Digest bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw std::runtime_error("the system's random number generator failed");
    }
    return hex(bytes);
}

std::optional<std::string> read_owner_token(const std::filesystem::path& data_dir) {
    auto text = read_file(data_dir / std::string(OWNER_TOKEN_FILE));
    if (!text) {
        return std::nullopt;
    }
    auto t = trim(*text);
    if (t.empty()) {
        return std::nullopt;
    }
    return t;
}

boost::system::result<std::string>
owner_token(const std::filesystem::path& data_dir, bool& created) {
    created = false;
    const auto path = data_dir / std::string(OWNER_TOKEN_FILE);
    std::error_code fec;
    if (std::filesystem::exists(path, fec)) {
        if (auto t = read_owner_token(data_dir)) {
            return *t;
        }
        return boost::system::error_code(EACCES, boost::system::system_category());
    }
    std::filesystem::create_directories(data_dir, fec);
    auto token = random_token();
    if (auto r = safe_write(path, token + "\n", 0600); !r) {
        return r.error();
    }
    created = true;
    return token;
}

boost::system::result<std::vector<ViewerToken>>
read_viewers(const std::filesystem::path& data_dir) {
    std::vector<ViewerToken> out;
    std::error_code fec;
    if (!std::filesystem::exists(viewers_path(data_dir), fec)) {
        return out;
    }
    auto text = read_file(viewers_path(data_dir));
    if (!text) {
        return boost::system::error_code(EACCES, boost::system::system_category());
    }
    boost::system::error_code ec;
    auto v = json::parse(*text, ec);
    const auto* tokens = (!ec && v.is_object()) ? v.get_object().if_contains("tokens") : nullptr;
    if (tokens == nullptr || !tokens->is_array()) {
        return make_error_code(errc::corrupt_data);
    }
    for (const auto& e : tokens->get_array()) {
        const auto* o = e.if_object();
        if (o == nullptr) {
            return make_error_code(errc::corrupt_data);
        }
        ViewerToken t;
        const auto* id = o->if_contains("id");
        const auto* sha = o->if_contains("sha256");
        const auto* seat = o->if_contains("seat");
        const auto* created = o->if_contains("created");
        const auto* expires = o->if_contains("expires");
        if (id == nullptr || !id->is_string() || sha == nullptr || !sha->is_string()
            || seat == nullptr || !seat->is_string() || created == nullptr || !created->is_int64()
            || expires == nullptr || !expires->is_int64()) {
            return make_error_code(errc::corrupt_data);
        }
        t.id = std::string(id->get_string());
        t.digest_hex = std::string(sha->get_string());
        t.seat = std::string(seat->get_string());
        t.created = created->get_int64();
        t.expires = expires->get_int64();
        out.push_back(std::move(t));
    }
    return out;
}

boost::system::result<Minted>
mint_viewer(const std::filesystem::path& data_dir, std::string seat, std::chrono::seconds ttl) {
    auto list = read_viewers(data_dir);
    if (!list) {
        return list.error();
    }
    Minted m;
    m.token = random_token();
    const auto d = digest(m.token);
    m.entry.digest_hex = hex(d);
    m.entry.id = hex(digest(m.entry.digest_hex)).substr(0, 8); // public, says nothing of it
    m.entry.seat = std::move(seat);
    m.entry.created = unix_now();
    m.entry.expires = ttl.count() > 0 ? m.entry.created + ttl.count() : 0;
    list->push_back(m.entry);
    if (auto r = write_viewers(data_dir, *list); !r) {
        return r.error();
    }
    return m;
}

boost::system::result<bool>
revoke_viewer(const std::filesystem::path& data_dir, std::string_view id) {
    auto list = read_viewers(data_dir);
    if (!list) {
        return {boost::system::in_place_error, list.error()};
    }
    if (id.size() < 4) {
        return false;
    }
    std::size_t matches = 0;
    for (const auto& t : *list) {
        if (t.id.rfind(id, 0) == 0) {
            ++matches;
        }
    }
    if (matches != 1) {
        return false;
    }
    std::erase_if(*list, [&](const ViewerToken& t) { return t.id.rfind(id, 0) == 0; });
    if (auto r = write_viewers(data_dir, *list); !r) {
        return {boost::system::in_place_error, r.error()};
    }
    return true;
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
    if (text.size() < 2 || text.size() > 12) {
        return std::nullopt;
    }
    std::int64_t n = 0;
    for (const char c : text.substr(0, text.size() - 1)) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        n = n * 10 + (c - '0');
    }
    if (n <= 0) {
        return std::nullopt;
    }
    switch (text.back()) {
    case 's':
        return std::chrono::seconds(n);
    case 'm':
        return std::chrono::seconds(n * 60);
    case 'h':
        return std::chrono::seconds(n * 3600);
    case 'd':
        return std::chrono::seconds(n * 86400);
    default:
        return std::nullopt;
    }
}

Keyring::Keyring(std::string_view owner, std::filesystem::path viewer_dir)
    : required_(!owner.empty())
    , owner_(digest(owner))
    , dir_(std::move(viewer_dir)) {
}

void Keyring::reload_if_changed() {
    // Under mu_. The file is replaced by rename, so its inode changes with every write.
    std::string stamp;

    struct stat st {};

    if (::stat(viewers_path(dir_).c_str(), &st) == 0) {
        stamp = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":"
                + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    }
    if (stamp == stamp_) {
        return;
    }
    auto list = read_viewers(dir_);
    if (!list) {
        return; // keep what was read before; a half-written file cannot be (safe_write)
    }
    stamp_ = std::move(stamp);
    viewers_.clear();
    for (auto& t : *list) {
        if (auto d = digest_from_hex(t.digest_hex)) {
            viewers_.emplace_back(*d, std::move(t));
        }
    }
}

Verdict Keyring::check(std::string_view token, std::int64_t now_unix) {
    if (!required_) {
        return {Grant{}, {}};
    }
    const auto d = digest(token);
    Verdict v;
    bool owner = digest_equal(d, owner_);
    if (dir_.empty()) {
        if (owner) {
            v.grant = Grant{};
        } else {
            v.why = "the token is not valid";
        }
        return v;
    }
    std::lock_guard lock(mu_);
    reload_if_changed();
    const ViewerToken* match = nullptr;
    for (const auto& [vd, t] : viewers_) {
        if (digest_equal(d, vd)) { // every entry compared: the time says nothing of which
            match = &t;
        }
    }
    if (owner) {
        v.grant = Grant{};
    } else if (match != nullptr && match->expires != 0 && now_unix >= match->expires) {
        v.why = "the viewer token has expired";
    } else if (match != nullptr) {
        v.grant = Grant{Role::viewer, match->seat};
    } else {
        v.why = "the token is not valid (wrong, or revoked)";
    }
    return v;
}

} // namespace sluice::server::auth
