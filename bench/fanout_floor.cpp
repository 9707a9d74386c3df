// fanout_floor.cpp: the machine's floor for bench/fanout.sh's paced latency step (issue 31).
//
//   fanout_floor SUBS FRAMES RATE THREADS GO_FILE
//     listens on 127.0.0.1:0 and prints "listening PORT"; accepts SUBS connections, answers each
//     GET with a plain (unchunked) text/event-stream header; once GO_FILE exists, publishes
//     FRAMES events of ~1.1 KiB at RATE per second. An event's text is "MSG<k>;T<ns>;" with ns
//     taken just before its fan-out begins, padded like bench/fanout_agent.py's rows, written
//     with one non-blocking send() per subscriber, the subscribers split evenly across THREADS
//     threads (the publishing thread writes the first share). Prints its own CPU seconds and
//     how many sends did not take a whole event.
//
// It is what a server that does nothing but the deliveries costs on this machine: no HTTP
// routing, no JSON, no window, no agent process, no pipe, the clock read after all of them.
// bench/fanout_client.cpp measures it exactly as it measures sluice and nginx + nchan, so the
// three latencies stand against the kernel's own cost of a loopback delivery.
// Built with fanout_conn.cpp by bench/fanout.sh with g++ -O2; not part of the CMake build.
#include "fanout_conn.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

using fanout::cpu_seconds;
using fanout::now_ns;

// The event being fanned out: the publisher writes it, bumps `generation` and wakes the
// writers; each writer sends it to its share and counts itself into `finished`.
struct Shared {
    std::string event;
    std::atomic<std::uint64_t> generation{0};
    std::atomic<int> finished{0};
    std::atomic<bool> stop{false};
    std::atomic<long> short_sends{0};
};

void send_share(const std::vector<int>& fds, std::size_t from, std::size_t to, Shared& sh) {
    long short_sends = 0;
    for (std::size_t i = from; i < to; ++i) {
        const ssize_t n = send(fds[i], sh.event.data(), sh.event.size(), MSG_NOSIGNAL);
        if (n != static_cast<ssize_t>(sh.event.size()))
            ++short_sends;
    }
    if (short_sends != 0)
        sh.short_sends.fetch_add(short_sends);
}

void writer(const std::vector<int>* fds, std::size_t from, std::size_t to, Shared* sh) {
    std::uint64_t seen = 0;
    while (true) {
        sh->generation.wait(seen);
        if (sh->stop.load())
            return;
        seen = sh->generation.load();
        send_share(*fds, from, to, *sh);
        sh->finished.fetch_add(1);
        sh->finished.notify_one();
    }
}

std::string event_for(long k, std::int64_t ts) {
    const std::string head = "MSG" + std::to_string(k) + ";T" + std::to_string(ts) + ";";
    // What bench/fanout_agent.py's row carries to a subscriber: a ~1 KiB JSON frame.
    std::string ev = "id: " + std::to_string(k) + "\nevent: frame\ndata: {\"text\":\"" + head;
    ev.append(1024 - head.size(), 'x');
    ev += "\"}\n\n";
    return ev;
}

// Reads one request's header (until a blank line) from a blocking socket.
bool read_request(int fd) {
    std::string got;
    char buf[4096];
    while (got.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return false;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: fanout_floor SUBS FRAMES RATE THREADS GO_FILE\n");
        return 2;
    }
    const int subs = std::atoi(argv[1]);
    const long frames = std::atol(argv[2]);
    const double rate = std::atof(argv[3]);
    const int threads = std::max(1, std::atoi(argv[4]));
    const char* go_file = argv[5];

    const int lfd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(lfd, 4096) != 0
        || getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &alen) != 0) {
        std::perror("listen");
        return 2;
    }
    std::printf("listening %d\n", ntohs(a.sin_port));
    std::fflush(stdout);

    static const char header[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";
    std::vector<int> fds;
    fds.reserve(static_cast<std::size_t>(subs));
    while (static_cast<int>(fds.size()) < subs) {
        const int fd = accept(lfd, nullptr, nullptr);
        if (fd < 0) {
            std::perror("accept");
            return 2;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (!read_request(fd)
            || send(fd, header, sizeof header - 1, MSG_NOSIGNAL)
                   != static_cast<ssize_t>(sizeof header - 1)) {
            close(fd);
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        fds.push_back(fd);
    }
    while (access(go_file, F_OK) != 0)
        usleep(1000);

    Shared sh;
    const auto share = [&](int t) { return fds.size() * static_cast<std::size_t>(t) / threads; };
    std::vector<std::thread> ws;
    for (int t = 1; t < threads; ++t)
        ws.emplace_back(writer, &fds, share(t), share(t + 1), &sh);

    const double cpu0 = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    for (long k = 0; k < frames; ++k) {
        std::this_thread::sleep_until(
            start + std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * k / rate)));
        sh.event = event_for(k, now_ns());
        sh.finished.store(0);
        sh.generation.fetch_add(1);
        sh.generation.notify_all();
        send_share(fds, 0, share(1), sh);
        for (int f = sh.finished.load(); f < threads - 1; f = sh.finished.load())
            sh.finished.wait(f);
    }
    const double cpu = cpu_seconds() - cpu0;
    sh.stop.store(true);
    sh.generation.fetch_add(1);
    sh.generation.notify_all();
    for (auto& w : ws)
        w.join();
    std::printf("floor: server_cpu_s=%.2f short_sends=%ld\n", cpu, sh.short_sends.load());
    std::fflush(stdout);
    sleep(1);
    for (const int fd : fds)
        close(fd);
    return 0;
}
