// StubProvider: the loopback canned-response HTTP server used by provider, runtime and CLI tests.
#include "support/stub_provider.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sluice::test {

namespace {

using tls_stream = ssl::stream<tcp::socket>;

tcp::socket& raw(tcp::socket& s) {
    return s;
}

tcp::socket& raw(tls_stream& s) {
    return s.next_layer();
}

/// A fresh self-signed certificate for localhost / 127.0.0.1: {certificate PEM, key PEM}.
std::pair<std::string, std::string> self_signed_certificate() {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(
        name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    for (const auto& [nid, value] :
         {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"},
          std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    X509_sign(x, key, EVP_sha256());
    const auto pem = [](auto write) {
        BIO* bio = BIO_new(BIO_s_mem());
        write(bio);
        char* data = nullptr;
        const long n = BIO_get_mem_data(bio, &data);
        std::string out(data, static_cast<std::size_t>(n));
        BIO_free(bio);
        return out;
    };
    std::string cert = pem([x](BIO* b) { PEM_write_bio_X509(b, x); });
    std::string pkey = pem(
        [key](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
    X509_free(x);
    EVP_PKEY_free(key);
    return {std::move(cert), std::move(pkey)};
}

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

bool iequals(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x))
               == std::tolower(static_cast<unsigned char>(y));
    });
}

std::string reason_for(unsigned status) {
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 529:
        return "Overloaded";
    default:
        return "Status";
    }
}

std::string chunk_frame(std::string_view piece) {
    std::ostringstream os;
    os << std::hex << piece.size() << "\r\n";
    std::string out = os.str();
    out.append(piece);
    out.append("\r\n");
    return out;
}

std::string flood_prelude(StubFlood kind) {
    if (kind == StubFlood::anthropic) {
        return "event: message_start\ndata: "
               "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_flood\","
               "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"stub-flood\",\"content\":[]"
               ","
               "\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
               "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
    }
    return {};
}

std::string flood_batch(StubFlood kind, std::size_t delta_bytes) {
    const std::string text(delta_bytes, 'x');
    std::string one;
    if (kind == StubFlood::anthropic) {
        one = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
              "\"delta\":{\"type\":\"text_delta\",\"text\":\""
              + text + "\"}}\n\n";
    } else {
        one = "data: {\"id\":\"chatcmpl-flood\",\"object\":\"chat.completion.chunk\",\"model\":"
              "\"stub-flood\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\""
              + text + "\"},\"finish_reason\":null}]}\n\n";
    }
    std::string batch;
    for (int i = 0; i < 16; ++i) {
        batch += one;
    }
    return batch;
}

} // namespace

std::string StubRequest::header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (iequals(k, name)) {
            return v;
        }
    }
    return {};
}

struct StubProvider::impl {
    net::io_context io;
    std::unique_ptr<ssl::context> tls;
    std::string ca_pem;
    tcp::acceptor acceptor{io};
    std::thread thread;
    std::uint16_t port{};

    mutable std::mutex mutex;
    mutable std::condition_variable changed;
    std::deque<StubResponse> queue;
    std::vector<StubRequest> requests;
    std::size_t closed_by_client{};
    std::size_t active{};
    std::atomic<std::uint64_t> bytes_sent{};

    net::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(TUPLE);
            if (ec) {
                co_return;
            }
            if (tls) {
                net::co_spawn(io, serve_tls(std::move(sock)), net::detached);
            } else {
                net::co_spawn(io, serve(std::move(sock)), net::detached);
            }
        }
    }

    net::awaitable<void> serve_tls(tcp::socket sock) {
        tls_stream stream(std::move(sock), *tls);
        if (auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, TUPLE); ec) {
            co_return;
        }
        const char* name = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name);
        // A local of this frame passed by reference: passing the string by value into the
        // coroutine corrupted the heap here under GCC 12 (seen in HttpClient TLS tests).
        const std::string sni = name != nullptr ? std::string(name) : std::string();
        co_await serve(stream, sni);
    }

    net::awaitable<void> serve(tcp::socket sock) {
        const std::string none;
        co_await serve(sock, none);
    }

    template <class Stream>
    net::awaitable<void> serve(Stream& sock, const std::string& sni) {
        beast::flat_buffer buffer;
        http::request_parser<http::string_body> parser;
        parser.body_limit(64U << 20U);
        auto [rec, rn] = co_await http::async_read(sock, buffer, parser, TUPLE);
        if (rec) {
            co_return;
        }
        const auto& req = parser.get();
        StubRequest got;
        got.method = std::string(req.method_string());
        got.target = std::string(req.target());
        for (const auto& f : req) {
            got.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
        }
        got.body = req.body();
        got.sni = sni;

        StubResponse resp;
        {
            const std::lock_guard lock(mutex);
            requests.push_back(std::move(got));
            if (queue.empty()) {
                resp.status = 500;
                resp.content_type = "text/plain";
                resp.body = "stub: no canned response";
                resp.content_length = true;
            } else {
                resp = std::move(queue.front());
                queue.pop_front();
            }
            ++active;
            changed.notify_all();
        }
        const bool by_client = co_await respond(sock, resp);
        {
            const std::lock_guard lock(mutex);
            --active;
            if (by_client) {
                ++closed_by_client;
            }
            changed.notify_all();
        }
    }

    /// Writes one response; true if the client went away mid-body.
    template <class Stream>
    net::awaitable<bool> respond(Stream& sock, const StubResponse& resp) {
        const bool chunked = !resp.content_length;
        std::string head = "HTTP/1.1 " + std::to_string(resp.status) + " " + reason_for(resp.status)
                           + "\r\nContent-Type: " + resp.content_type + "\r\nConnection: close\r\n";
        for (const auto& [k, v] : resp.headers) {
            head += k + ": " + v + "\r\n";
        }
        head += chunked ? "Transfer-Encoding: chunked\r\n"
                        : "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
        head += "\r\n";
        if (auto [ec, n] = co_await net::async_write(sock, net::buffer(head), TUPLE); ec) {
            co_return true;
        }
        net::steady_timer timer(io);
        auto send = [&](std::string_view piece) -> net::awaitable<bool> {
            if (resp.pace.count() > 0) {
                timer.expires_after(resp.pace);
                co_await timer.async_wait(TUPLE);
            }
            const std::string framed = chunked ? chunk_frame(piece) : std::string(piece);
            auto [ec, n] = co_await net::async_write(sock, net::buffer(framed), TUPLE);
            if (!ec) {
                bytes_sent += piece.size();
            }
            co_return !ec;
        };
        std::string_view body = resp.body;
        if (resp.flood != StubFlood::none) {
            // The prelude and the body go first, then deltas until a write fails.
            const std::string prelude = flood_prelude(resp.flood);
            if (!prelude.empty() && !co_await send(prelude)) {
                co_return true;
            }
        }
        const std::size_t step =
            resp.chunk_size == 0 ? std::max<std::size_t>(body.size(), 1) : resp.chunk_size;
        for (std::size_t off = 0; off < body.size(); off += step) {
            if (!co_await send(body.substr(off, step))) {
                co_return true;
            }
        }
        if (resp.flood != StubFlood::none) {
            const std::string batch = flood_batch(resp.flood, resp.flood_delta_bytes);
            for (;;) {
                if (!co_await send(batch)) {
                    co_return true;
                }
            }
        }
        if (resp.truncate) {
            raw(sock).close();
            co_return false;
        }
        if (chunked) {
            if (auto [ec, n] = co_await net::async_write(sock, net::buffer("0\r\n\r\n", 5), TUPLE);
                ec) {
                co_return true;
            }
        }
        // Let the client see the end, then wait (bounded) for it to close its side.
        boost::system::error_code ignored;
        auto& bare = raw(sock);
        bare.shutdown(tcp::socket::shutdown_send, ignored);
        timer.expires_after(std::chrono::seconds(30));
        timer.async_wait([&bare](boost::system::error_code ec) {
            if (!ec) {
                boost::system::error_code e2;
                bare.close(e2);
            }
        });
        char sink[256];
        for (;;) {
            auto [ec, n] = co_await bare.async_read_some(net::buffer(sink), TUPLE);
            if (ec) {
                break;
            }
        }
        timer.cancel();
        co_return false;
    }
};

StubProvider::StubProvider()
    : StubProvider(StubOptions{}) {
}

StubProvider::StubProvider(StubOptions options)
    : impl_(std::make_shared<impl>()) {
    auto& s = *impl_;
    if (options.tls) {
        auto [cert, key] = self_signed_certificate();
        s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
        s.tls->use_certificate(net::buffer(cert), ssl::context::pem);
        s.tls->use_private_key(net::buffer(key), ssl::context::pem);
        s.ca_pem = std::move(cert);
    }
    const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
    s.acceptor.open(ep.protocol());
    s.acceptor.set_option(tcp::acceptor::reuse_address(true));
    s.acceptor.bind(ep);
    s.acceptor.listen();
    s.port = s.acceptor.local_endpoint().port();
    net::co_spawn(s.io, s.accept_loop(), net::detached);
    s.thread = std::thread([&s] { s.io.run(); });
}

StubProvider::~StubProvider() {
    impl_->io.stop();
    impl_->thread.join();
    // Destroying the io_context (with impl_) destroys every connection's coroutine and socket.
}

std::uint16_t StubProvider::port() const noexcept {
    return impl_->port;
}

std::string StubProvider::base_url() const {
    return impl_->tls ? "https://localhost:" + std::to_string(impl_->port)
                      : "http://127.0.0.1:" + std::to_string(impl_->port);
}

std::string StubProvider::ca_pem() const {
    return impl_->ca_pem;
}

void StubProvider::enqueue(StubResponse response) {
    const std::lock_guard lock(impl_->mutex);
    impl_->queue.push_back(std::move(response));
}

std::vector<StubRequest> StubProvider::requests() const {
    const std::lock_guard lock(impl_->mutex);
    return impl_->requests;
}

std::size_t StubProvider::request_count() const {
    const std::lock_guard lock(impl_->mutex);
    return impl_->requests.size();
}

std::size_t StubProvider::closed_by_client_count() const {
    const std::lock_guard lock(impl_->mutex);
    return impl_->closed_by_client;
}

bool StubProvider::wait_closed_by_client(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->changed.wait_for(lock, timeout, [&] { return impl_->closed_by_client >= n; });
}

bool StubProvider::wait_requests(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->changed.wait_for(lock, timeout, [&] { return impl_->requests.size() >= n; });
}

std::uint64_t StubProvider::bytes_sent() const noexcept {
    return impl_->bytes_sent.load();
}

std::size_t StubProvider::active_responses() const {
    const std::lock_guard lock(impl_->mutex);
    return impl_->active;
}

std::string StubProvider::sse_from_data_lines(std::string_view lines) {
    std::string out;
    out.reserve(lines.size() + lines.size() / 8);
    while (!lines.empty()) {
        const auto nl = lines.find('\n');
        std::string_view line = lines.substr(0, nl);
        lines = nl == std::string_view::npos ? std::string_view{} : lines.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty()) {
            continue;
        }
        out += "data: ";
        out += line;
        out += "\n\n";
    }
    return out;
}

std::string StubProvider::terminated_sse(std::string body) {
    const auto ends_with = [&](std::string_view tail) {
        return body.size() >= tail.size()
               && body.compare(body.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (!(ends_with("\n\n") || ends_with("\r\n\r\n") || ends_with("\r\r"))) {
        body += ends_with("\n") ? "\n" : "\n\n";
    }
    return body;
}

std::string StubProvider::read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace sluice::test
