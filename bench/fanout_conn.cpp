// fanout_conn.cpp: one SSE subscriber connection of bench/fanout_client.cpp: connect, read the
// response header, de-chunk, scan the "MSG<k>;T<ns>;" tokens (fanout_conn.hpp).
#include "fanout_conn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace fanout {

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto secs = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

int connect_to(int port, bool nonblock) {
    int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) {
        std::perror("socket");
        std::exit(2);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
        std::perror("connect");
        std::exit(2);
    }
    return fd;
}

bool join_mode = false; // set once in main, before any thread starts (fanout_conn.hpp)

std::atomic<int> headers_ready{0};
std::atomic<bool> go_read{false};

void scan_tokens(Conn& c, std::int64_t expect, Totals& t, std::int64_t now) {
    std::string_view s(c.scan);
    std::size_t pos = 0, cut = std::string_view::npos;
    for (std::size_t at = s.find("event: connected", pos); at != std::string_view::npos;
         at = s.find("event: connected", at + 1)) {
        ++c.connected_events;
    }
    while (true) {
        std::size_t m = s.find("MSG", pos);
        if (m == std::string_view::npos)
            break;
        std::size_t i = m + 3;
        std::int64_t k = 0, ts = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            k = k * 10 + (s[i++] - '0');
        if (i + 2 >= s.size()) { // token cut by the read: keep it for the next one
            cut = m;
            break;
        }
        if (s[i] != ';' || s[i + 1] != 'T') {
            pos = m + 3;
            continue;
        }
        i += 2;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ts = ts * 10 + (s[i++] - '0');
        if (i >= s.size()) {
            cut = m;
            break;
        }
        pos = i;
        if (join_mode && !c.started) {
            c.started = true;
            c.next_k = k;
            c.first_k = k;
        }
        if (k == c.next_k) {
            ++c.received;
            ++c.next_k;
        } else if (k > c.next_k) {
            c.lost += k - c.next_k;
            ++c.received;
            c.next_k = k + 1;
        } else {
            ++c.dup;
            continue;
        }
        if (t.first_ns == 0)
            t.first_ns = now;
        t.last_ns = now;
        t.lat_us.push_back((now - ts) / 1000);
        if (c.next_k >= expect)
            c.done = true;
    }
    if (cut != std::string_view::npos) {
        c.scan.erase(0, cut);
    } else {
        c.scan.erase(0, std::max(pos, s.size() > 2 ? s.size() - 2 : std::size_t{0}));
    }
}

void feed_payload(Conn& c, const char* p, std::size_t n) {
    c.scan.append(p, n);
    if (join_mode && !c.bye && memmem(p, n, ": bye: ", 7) != nullptr) {
        c.bye = true;
    }
}

void feed(Conn& c, const char* p, std::size_t n) {
    if (!c.header_done) {
        c.header.append(p, n);
        std::size_t e = c.header.find("\r\n\r\n");
        if (e == std::string::npos)
            return;
        c.header_done = true;
        std::string h = c.header.substr(0, e);
        for (auto& ch : h)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        c.chunked = h.find("transfer-encoding: chunked") != std::string::npos;
        if (h.rfind("http/1.1 200", 0) != 0) {
            std::fprintf(stderr, "unexpected response: %.200s\n", c.header.c_str());
        }
        std::string rest = c.header.substr(e + 4);
        c.header.clear();
        headers_ready.fetch_add(1);
        feed(c, rest.data(), rest.size());
        return;
    }
    if (!c.chunked) {
        feed_payload(c, p, n);
        return;
    }
    std::size_t i = 0;
    while (i < n) {
        if (c.chunk_state == 0) {
            const char* nl = static_cast<const char*>(std::memchr(p + i, '\n', n - i));
            if (!nl) {
                c.size_line.append(p + i, n - i);
                return;
            }
            c.size_line.append(p + i, static_cast<std::size_t>(nl - (p + i)));
            i = static_cast<std::size_t>(nl - p) + 1;
            c.chunk_left = std::strtoul(c.size_line.c_str(), nullptr, 16);
            c.size_line.clear();
            c.chunk_state = c.chunk_left ? 1 : 2;
        } else if (c.chunk_state == 1) {
            std::size_t take = std::min(c.chunk_left, n - i);
            feed_payload(c, p + i, take);
            i += take;
            c.chunk_left -= take;
            if (c.chunk_left == 0)
                c.chunk_state = 2;
        } else {
            const char* nl = static_cast<const char*>(std::memchr(p + i, '\n', n - i));
            if (!nl)
                return;
            i = static_cast<std::size_t>(nl - p) + 1;
            c.chunk_state = 0;
        }
    }
}

} // namespace fanout
