// Test support: a private redis-server child, started and stopped by pid.
#include "support/redis_process.hpp"

#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace sluice::test {

namespace {

constexpr const char* REDIS_SERVER = "/usr/bin/redis-server";

unsigned free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        ::close(fd);
        throw std::runtime_error("no free port");
    }
    ::close(fd);
    return ntohs(a.sin_port);
}

bool answers(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (ok) {
        const char ping[] = "PING\r\n";
        ok = ::write(fd, ping, sizeof ping - 1) == static_cast<ssize_t>(sizeof ping - 1);
        std::array<char, 16> buf{};
        ok = ok && ::read(fd, buf.data(), buf.size()) > 0 && buf[0] == '+';
    }
    ::close(fd);
    return ok;
}

} // namespace

bool have_redis_server() {
    return ::access(REDIS_SERVER, X_OK) == 0;
}

RedisProcess::RedisProcess(bool tcp)
    : socket_(dir_.file("redis.sock")) {
    if (tcp) {
        port_ = free_port();
    }
    start();
}

RedisProcess::RedisProcess(RedisTls tls)
    : socket_(dir_.file("redis.sock"))
    , tls_port_(free_port())
    , tls_(std::move(tls)) {
    start();
}

RedisProcess::~RedisProcess() {
    stop();
}

void RedisProcess::start() {
    if (pid_ != 0) {
        return;
    }
    std::vector<std::string> args{
        REDIS_SERVER,
        "--port",
        std::to_string(port_),
        "--bind",
        "127.0.0.1",
        "--unixsocket",
        socket_,
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir_.path(),
        "--loglevel",
        "warning",
        "--logfile",
        dir_.file("redis.log")};
    if (tls_port_ != 0) {
        args.insert(
            args.end(),
            {"--tls-port",
             std::to_string(tls_port_),
             "--tls-cert-file",
             tls_.cert,
             "--tls-key-file",
             tls_.key,
             "--tls-ca-cert-file",
             tls_.ca,
             "--tls-auth-clients",
             tls_.auth_clients ? "yes" : "no"});
    }
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, REDIS_SERVER, nullptr, nullptr, argv.data(), environ) != 0) {
        throw std::runtime_error("cannot start redis-server");
    }
    pid_ = pid;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!answers(socket_)) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = 0;
            throw std::runtime_error("redis-server exited at start");
        }
        if (std::chrono::steady_clock::now() > deadline) {
            stop(true);
            throw std::runtime_error("redis-server did not answer within 10 s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void RedisProcess::stop(bool kill) {
    if (pid_ == 0) {
        return;
    }
    ::kill(pid_, kill ? SIGKILL : SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = 0;
    ::unlink(socket_.c_str());
}

std::string RedisProcess::cli(const std::string& args) const {
    const std::string cmd = "redis-cli -s '" + socket_ + "' " + args + " 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        std::array<char, 4096> buf{};
        std::size_t n = 0;
        while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
            out.append(buf.data(), n);
        }
        ::pclose(p);
    }
    return out;
}

} // namespace sluice::test
