// fanout_client.cpp: SSE subscriber swarm and pipelined HTTP publisher for bench/fanout.sh.
//
//   fanout_client sub PORT PATH N EXPECT TIMEOUT_S THREADS
//     opens N SSE connections to 127.0.0.1:PORT PATH, prints "READY" once every response header
//     arrived, then counts every "MSG<k>;T<ns>;" token per connection until each saw k = EXPECT-1
//     (or TIMEOUT_S passed), checking order (loss / duplicates) and publish-to-receive latency.
//   fanout_client join PORT PATH N EXPECT TIMEOUT_S THREADS SPREAD_S
//     as `sub`, but the N connections are opened over SPREAD_S seconds (while the tokens flow:
//     subscribers joining during a burst), each counting from the first token it sees (a
//     joiner's `connected` window starts mid-burst); the Authorization header carries
//     $SLUICE_TOKEN when set. Prints the range of first tokens seen and how many connections
//     saw every token from their first to EXPECT-1 with none lost or duplicated.
//   fanout_client pub PORT PATH M DEPTH [RATE]
//     publishes M bodies of 1024 bytes ("MSG<k>;T<ns>;xxx...") as keep-alive POSTs on one
//     connection, pipelined DEPTH deep (responses read in order); with RATE > 0, one at a time
//     at RATE per second (the paced load of the latency step).
// Built with fanout_conn.cpp by bench/fanout.sh with g++ -O2; not part of the CMake build.
// Thread safety: each worker thread owns its connections; results are merged after join.
#include "fanout_conn.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace fanout;

// Reads each of the `n` ready connections once, feeds and scans what came; a connection that
// closed or is done leaves the epoll set. @return how many left it.
std::size_t read_ready(
    int ep,
    std::vector<Conn>& conns,
    const std::vector<epoll_event>& evs,
    int n,
    std::vector<char>& buf,
    std::int64_t expect,
    Totals& t) {
    std::size_t left = 0;
    std::int64_t now = now_ns();
    for (int e = 0; e < n; ++e) {
        Conn& c = conns[evs[static_cast<std::size_t>(e)].data.u64];
        ssize_t r = recv(c.fd, buf.data(), buf.size(), 0);
        if (r <= 0) {
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            c.closed = true;
            epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
            ++left;
            continue;
        }
        feed(c, buf.data(), static_cast<std::size_t>(r));
        if (c.header_done)
            scan_tokens(c, expect, t, now);
        if (c.done) {
            epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
            ++left;
        }
    }
    return left;
}

void sub_worker(
    std::vector<Conn>* conns,
    std::int64_t expect,
    double timeout_s,
    Totals* t,
    std::int64_t deadline_ns) {
    int ep = epoll_create1(0);
    for (std::size_t i = 0; i < conns->size(); ++i) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = i;
        epoll_ctl(ep, EPOLL_CTL_ADD, (*conns)[i].fd, &ev);
    }
    (void)timeout_s;
    std::vector<char> buf(256 * 1024);
    std::vector<epoll_event> evs(256);
    std::size_t open = conns->size();
    while (open > 0) {
        if (now_ns() > deadline_ns)
            break;
        int n = epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), 200);
        open -= read_ready(ep, *conns, evs, n, buf, expect, *t);
    }
    close(ep);
}

int run_sub(
    int port, const std::string& path, int n, std::int64_t expect, double timeout_s, int threads) {
    std::vector<std::vector<Conn>> parts(static_cast<std::size_t>(threads));
    std::string req =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
    for (int i = 0; i < n; ++i) {
        Conn c;
        c.fd = connect_to(port, false); // blocking connect: a 1,000-deep burst stays in the backlog
        if (send(c.fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
            std::perror("send");
            return 2;
        }
        fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
        parts[static_cast<std::size_t>(i % threads)].push_back(std::move(c));
    }
    // Read headers (and the first event) until every connection answered.
    std::vector<char> buf(65536);
    std::int64_t hdr_deadline = now_ns() + 30'000'000'000LL;
    for (auto& part : parts) {
        for (auto& c : part) {
            while (!c.header_done && now_ns() < hdr_deadline) {
                ssize_t r = recv(c.fd, buf.data(), buf.size(), 0);
                if (r > 0) {
                    feed(c, buf.data(), static_cast<std::size_t>(r));
                } else if (r == 0) {
                    std::fprintf(stderr, "connection closed before header\n");
                    return 2;
                } else {
                    usleep(1000);
                }
            }
        }
    }
    std::printf("READY %d\n", headers_ready.load());
    std::fflush(stdout);
    std::int64_t deadline = now_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
    std::vector<Totals> totals(static_cast<std::size_t>(threads));
    std::vector<std::thread> ts;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        ts.emplace_back(sub_worker, &parts[i], expect, timeout_s, &totals[i], deadline);
    }
    for (auto& th : ts)
        th.join();
    Totals all;
    for (auto& t : totals) {
        if (t.first_ns && (all.first_ns == 0 || t.first_ns < all.first_ns))
            all.first_ns = t.first_ns;
        all.last_ns = std::max(all.last_ns, t.last_ns);
        all.lat_us.insert(all.lat_us.end(), t.lat_us.begin(), t.lat_us.end());
    }
    for (auto& part : parts) {
        for (auto& c : part) {
            all.received += c.received;
            all.lost += c.lost;
            all.dup += c.dup;
            all.resyncs += std::max<std::int64_t>(0, c.connected_events - 1);
            if (!c.done) {
                ++all.incomplete;
                all.lost += expect - c.next_k; // never arrived before the deadline
            }
            if (c.closed)
                ++all.closed;
            close(c.fd);
        }
    }
    double secs = static_cast<double>(all.last_ns - all.first_ns) / 1e9;
    std::sort(all.lat_us.begin(), all.lat_us.end());
    auto pct = [&](double p) -> double {
        if (all.lat_us.empty())
            return -1;
        std::size_t i = static_cast<std::size_t>(p * static_cast<double>(all.lat_us.size() - 1));
        return static_cast<double>(all.lat_us[i]) / 1000.0;
    };
    std::printf(
        "subscribers=%d expect_each=%lld received=%lld lost=%lld dup=%lld resyncs=%lld "
        "incomplete=%lld "
        "closed=%lld first_to_last_s=%.3f msgs_per_s=%.0f lat_ms_p50=%.3f lat_ms_p99=%.3f "
        "lat_ms_max=%.3f client_cpu_s=%.2f\n",
        n,
        static_cast<long long>(expect),
        static_cast<long long>(all.received),
        static_cast<long long>(all.lost),
        static_cast<long long>(all.dup),
        static_cast<long long>(all.resyncs),
        static_cast<long long>(all.incomplete),
        static_cast<long long>(all.closed),
        secs,
        secs > 0 ? static_cast<double>(all.received) / secs : 0.0,
        pct(0.50),
        pct(0.99),
        pct(1.0),
        cpu_seconds());
    return 0;
}

// Join mode: each worker opens its share of the connections on a schedule spread over
// `spread_s` (connection i at i/n of it) while reading those already open.
void join_worker(
    int port,
    const std::string* req,
    int n,
    int threads,
    int w,
    double spread_s,
    std::int64_t start_ns,
    std::int64_t expect,
    std::vector<Conn>* conns,
    Totals* t,
    std::int64_t deadline_ns) {
    int ep = epoll_create1(0);
    std::vector<int> mine;
    for (int i = w; i < n; i += threads) {
        mine.push_back(i);
    }
    conns->reserve(mine.size());
    std::size_t next = 0, open = 0;
    std::vector<char> buf(256 * 1024);
    std::vector<epoll_event> evs(256);
    while ((next < mine.size() || open > 0) && now_ns() < deadline_ns) {
        const std::int64_t now0 = now_ns();
        while (next < mine.size()
               && start_ns + static_cast<std::int64_t>(spread_s * 1e9 * mine[next] / n) <= now0) {
            Conn c;
            c.fd = connect_to(port, false);
            if (send(c.fd, req->data(), req->size(), MSG_NOSIGNAL)
                != static_cast<ssize_t>(req->size())) {
                std::perror("send");
                std::exit(2);
            }
            fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
            conns->push_back(std::move(c));
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u64 = conns->size() - 1;
            epoll_ctl(ep, EPOLL_CTL_ADD, conns->back().fd, &ev);
            ++next;
            ++open;
        }
        int m =
            epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), next < mine.size() ? 1 : 200);
        open -= read_ready(ep, *conns, evs, m, buf, expect, *t);
    }
    close(ep);
}

int run_join(
    int port,
    const std::string& path,
    int n,
    std::int64_t expect,
    double timeout_s,
    int threads,
    double spread_s) {
    join_mode = true;
    std::string req =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n";
    if (const char* tok = std::getenv("SLUICE_TOKEN"); tok != nullptr && *tok != '\0') {
        req += "Authorization: Bearer " + std::string(tok) + "\r\n";
    }
    req += "\r\n";
    const std::int64_t start = now_ns();
    const std::int64_t deadline = start + static_cast<std::int64_t>(timeout_s * 1e9);
    std::vector<std::vector<Conn>> parts(static_cast<std::size_t>(threads));
    std::vector<Totals> totals(static_cast<std::size_t>(threads));
    std::vector<std::thread> ts;
    for (int w = 0; w < threads; ++w) {
        ts.emplace_back(
            join_worker,
            port,
            &req,
            n,
            threads,
            w,
            spread_s,
            start,
            expect,
            &parts[static_cast<std::size_t>(w)],
            &totals[static_cast<std::size_t>(w)],
            deadline);
    }
    for (auto& th : ts)
        th.join();
    std::int64_t received = 0, lost = 0, dup = 0, incomplete = 0, closed = 0, complete = 0;
    std::int64_t first_min = -1, first_max = -1, connected = 0, byes = 0, bye_clean = 0;
    int opened = 0;
    for (auto& part : parts) {
        for (auto& c : part) {
            ++opened;
            received += c.received;
            lost += c.lost;
            dup += c.dup;
            connected += c.connected_events;
            if (!c.done) {
                ++incomplete;
            } else if (c.lost == 0 && c.dup == 0) {
                ++complete;
            }
            if (c.closed)
                ++closed;
            if (c.bye) {
                ++byes;
                bye_clean += c.lost == 0 && c.dup == 0 ? 1 : 0; // correct up to its let-go
            }
            if (c.first_k >= 0) {
                first_min = first_min < 0 ? c.first_k : std::min(first_min, c.first_k);
                first_max = std::max(first_max, c.first_k);
            }
            close(c.fd);
        }
    }
    std::printf(
        "subscribers=%d opened=%d headers=%d connected_events=%lld received=%lld lost=%lld "
        "dup=%lld incomplete=%lld closed=%lld complete=%lld byes=%lld byes_clean=%lld "
        "first_k_min=%lld first_k_max=%lld seconds=%.3f\n",
        n,
        opened,
        headers_ready.load(),
        static_cast<long long>(connected),
        static_cast<long long>(received),
        static_cast<long long>(lost),
        static_cast<long long>(dup),
        static_cast<long long>(incomplete),
        static_cast<long long>(closed),
        static_cast<long long>(complete),
        static_cast<long long>(byes),
        static_cast<long long>(bye_clean),
        static_cast<long long>(first_min),
        static_cast<long long>(first_max),
        static_cast<double>(now_ns() - start) / 1e9);
    return 0;
}

// RATE > 0: one request at a time, the k-th sent at start + k / RATE seconds (a paced load whose
// publish-to-receive latency the subscribers measure), else DEPTH pipelined.
int run_pub(int port, const std::string& path, std::int64_t m, int depth, double rate) {
    int fd = connect_to(port, false);
    std::string head = "POST " + path
                       + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                         "Accept: text/plain\r\nContent-Length: 1024\r\n\r\n";
    std::string in;
    std::vector<char> buf(65536);
    std::int64_t sent = 0, answered = 0, errors = 0;
    std::int64_t t0 = now_ns();
    auto send_one = [&]() {
        char tok[64];
        int len = std::snprintf(
            tok,
            sizeof tok,
            "MSG%lld;T%lld;",
            static_cast<long long>(sent),
            static_cast<long long>(now_ns()));
        std::string body(tok, static_cast<std::size_t>(len));
        body.resize(1024, 'x');
        std::string req = head + body;
        if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
            std::perror("publish send");
            std::exit(2);
        }
        ++sent;
    };
    if (rate > 0)
        depth = 1;
    const auto pace = [&] {
        if (rate <= 0)
            return;
        const std::int64_t due =
            t0 + static_cast<std::int64_t>(static_cast<double>(sent) * 1e9 / rate);
        const std::int64_t wait = due - now_ns();
        if (wait > 0) {
            timespec ts{
                static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
            nanosleep(&ts, nullptr);
        }
    };
    while (sent < m && sent - answered < depth) {
        pace();
        send_one();
    }
    while (answered < m) {
        ssize_t r = recv(fd, buf.data(), buf.size(), 0);
        if (r <= 0) {
            std::fprintf(
                stderr,
                "publisher connection closed after %lld answers\n",
                static_cast<long long>(answered));
            return 2;
        }
        in.append(buf.data(), static_cast<std::size_t>(r));
        while (true) {
            std::size_t e = in.find("\r\n\r\n");
            if (e == std::string::npos)
                break;
            std::string h = in.substr(0, e);
            for (auto& ch : h)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            std::size_t cl = 0, at = h.find("content-length:");
            if (at != std::string::npos)
                cl = std::strtoul(h.c_str() + at + 15, nullptr, 10);
            if (in.size() < e + 4 + cl)
                break;
            if (h.rfind("http/1.1 20", 0) != 0) {
                if (errors++ < 3)
                    std::fprintf(stderr, "publish answer: %.120s\n", in.c_str());
            }
            in.erase(0, e + 4 + cl);
            ++answered;
            if (sent < m) {
                pace();
                send_one();
            }
        }
    }
    double secs = static_cast<double>(now_ns() - t0) / 1e9;
    std::printf(
        "published=%lld errors=%lld seconds=%.3f publish_per_s=%.0f\n",
        static_cast<long long>(m),
        static_cast<long long>(errors),
        secs,
        static_cast<double>(m) / secs);
    close(fd);
    return errors ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 8 && std::string_view(argv[1]) == "sub") {
        return run_sub(
            std::atoi(argv[2]),
            argv[3],
            std::atoi(argv[4]),
            std::atoll(argv[5]),
            std::atof(argv[6]),
            std::max(1, std::atoi(argv[7])));
    }
    if (argc >= 9 && std::string_view(argv[1]) == "join") {
        return run_join(
            std::atoi(argv[2]),
            argv[3],
            std::atoi(argv[4]),
            std::atoll(argv[5]),
            std::atof(argv[6]),
            std::max(1, std::atoi(argv[7])),
            std::atof(argv[8]));
    }
    if (argc >= 6 && std::string_view(argv[1]) == "pub") {
        return run_pub(
            std::atoi(argv[2]),
            argv[3],
            std::atoll(argv[4]),
            std::max(1, std::atoi(argv[5])),
            argc >= 7 ? std::atof(argv[6]) : 0.0);
    }
    std::fprintf(
        stderr,
        "usage: fanout_client sub PORT PATH N EXPECT TIMEOUT_S THREADS | join PORT PATH N EXPECT "
        "TIMEOUT_S THREADS SPREAD_S | pub PORT PATH M DEPTH [RATE]\n");
    return 2;
}
