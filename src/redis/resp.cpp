// RESP2: the command encoder, hiredis's reply reader wrapped into owned replies, Redis URLs.
#include <sluice/redis/resp.hpp>

#include <hiredis/hiredis.h>

#include <charconv>

namespace sluice::redis {

void append_command(std::string& out, const std::vector<std::string>& args) {
    out += '*';
    out += std::to_string(args.size());
    out += "\r\n";
    for (const auto& a : args) {
        out += '$';
        out += std::to_string(a.size());
        out += "\r\n";
        out += a;
        out += "\r\n";
    }
}

namespace {

// NOLINTNEXTLINE(misc-no-recursion): a reply's depth is bounded by what Redis sends (≤ 7 here).
Reply convert(const redisReply& r) {
    Reply out;
    switch (r.type) {
    case REDIS_REPLY_STRING:
        out.type = Reply::Type::string;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_STATUS:
        out.type = Reply::Type::status;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_ERROR:
        out.type = Reply::Type::error;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_INTEGER:
        out.type = Reply::Type::integer;
        out.integer = r.integer;
        break;
    case REDIS_REPLY_ARRAY:
        out.type = Reply::Type::array;
        out.elements.reserve(r.elements);
        for (std::size_t i = 0; i < r.elements; ++i) {
            out.elements.push_back(convert(*r.element[i]));
        }
        break;
    default:
        out.type = Reply::Type::nil;
        break;
    }
    return out;
}

} // namespace

struct ReplyReader::Impl {
    redisReader* reader{redisReaderCreate()};

    Impl() = default;

    ~Impl() { redisReaderFree(reader); }

    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
};

ReplyReader::ReplyReader()
    : impl_(std::make_unique<Impl>()) {
}

ReplyReader::~ReplyReader() = default;

bool ReplyReader::feed(std::string_view bytes) {
    if (failed_ || redisReaderFeed(impl_->reader, bytes.data(), bytes.size()) != REDIS_OK) {
        failed_ = true;
    }
    return !failed_;
}

std::optional<Reply> ReplyReader::next() {
    if (failed_) {
        return std::nullopt;
    }
    void* raw = nullptr;
    if (redisReaderGetReply(impl_->reader, &raw) != REDIS_OK) {
        failed_ = true;
        return std::nullopt;
    }
    if (raw == nullptr) {
        return std::nullopt;
    }
    auto* reply = static_cast<redisReply*>(raw);
    Reply out = convert(*reply);
    freeReplyObject(reply);
    return out;
}

std::string Url::display() const {
    switch (kind) {
    case Kind::unix_socket:
        return "unix://" + path;
    case Kind::tls:
        return "rediss://" + host + ":" + std::to_string(port);
    default:
        return "redis://" + host + ":" + std::to_string(port);
    }
}

namespace {

bool parse_uint(std::string_view s, unsigned long& out) {
    if (s.empty()) {
        return false;
    }
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc{} && p == end;
}

} // namespace

boost::system::result<Url, std::string> parse_url(std::string_view text) {
    Url url;
    std::string_view rest;
    if (text.starts_with("unix://")) {
        url.kind = Url::Kind::unix_socket;
        rest = text.substr(7);
        if (const auto q = rest.find("?db="); q != std::string_view::npos) {
            unsigned long db = 0;
            if (!parse_uint(rest.substr(q + 4), db) || db > 15) {
                return std::string("bad db in Redis URL");
            }
            url.db = static_cast<unsigned>(db);
            rest = rest.substr(0, q);
        }
        if (rest.empty() || rest.front() != '/') {
            return std::string("a unix:// Redis URL needs an absolute path (unix:///path)");
        }
        url.path = std::string(rest);
        return url;
    }
    if (text.starts_with("redis://")) {
        rest = text.substr(8);
    } else if (text.starts_with("rediss://")) {
        url.kind = Url::Kind::tls;
        rest = text.substr(9);
    } else {
        return std::string("a Redis URL starts with redis://, rediss:// or unix://");
    }
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        auto auth = rest.substr(0, at);
        if (const auto colon = auth.find(':'); colon != std::string_view::npos) {
            auth = auth.substr(colon + 1); // user:password, the user is ignored (AUTH password)
        }
        url.password = std::string(auth);
        rest = rest.substr(at + 1);
    }
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        unsigned long db = 0;
        const auto d = rest.substr(slash + 1);
        if (!d.empty() && (!parse_uint(d, db) || db > 15)) {
            return std::string("bad db in Redis URL");
        }
        url.db = static_cast<unsigned>(db);
        rest = rest.substr(0, slash);
    }
    std::string_view host = rest;
    if (!rest.empty() && rest.front() == '[') {
        const auto close = rest.find(']');
        if (close == std::string_view::npos) {
            return std::string("bad IPv6 host in Redis URL");
        }
        host = rest.substr(1, close - 1);
        rest = rest.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') {
            return std::string("bad Redis URL");
        }
        if (!rest.empty()) {
            rest = rest.substr(0); // ":port"
        }
    } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        rest = rest.substr(colon);
    } else {
        rest = {};
    }
    if (!rest.empty()) {
        unsigned long port = 0;
        if (!parse_uint(rest.substr(1), port) || port == 0 || port > 65535) {
            return std::string("bad port in Redis URL");
        }
        url.port = static_cast<std::uint16_t>(port);
    }
    if (host.empty()) {
        return std::string("a Redis URL needs a host");
    }
    url.host = std::string(host);
    return url;
}

} // namespace sluice::redis
