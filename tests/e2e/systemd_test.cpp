// `sluice serve` under systemd, with systemd's own tools and protocol: a socket passed by
// socket activation (systemd-socket-activate), and READY=1, WATCHDOG=1 and STOPPING=1 sent to a
// NOTIFY_SOCKET this test binds.
#include "support/hub_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace sluice::test {
namespace {

using Clock = std::chrono::steady_clock;

// A free loopback port (bound and let go: the hub binds it next).
unsigned free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// A child process (argv[0] a path) with `env` added to this one's environment; stdout and
// stderr go to a pipe read by output(). The destructor kills it (by pid) and reaps it.
class Child {
public:
    Child(const std::vector<std::string>& args, const std::vector<std::string>& env) {
        std::vector<std::string> env_s(env);
        for (char** e = environ; *e != nullptr; ++e) {
            env_s.emplace_back(*e);
        }
        std::vector<char*> envp;
        for (auto& e : env_s) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);
        std::vector<std::string> argv_s(args);
        std::vector<char*> argv;
        for (auto& a : argv_s) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            return;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
        if (::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) {
            pid_ = -1;
        }
        posix_spawn_file_actions_destroy(&fa);
        ::close(fds[1]);
        out_ = fds[0];
        ::fcntl(out_, F_SETFL, O_NONBLOCK);
    }

    ~Child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
    }

    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    [[nodiscard]] int pid() const noexcept { return pid_; }

    // What it wrote so far.
    std::string output() {
        char buf[4096];
        ssize_t n = 0;
        while ((n = ::read(out_, buf, sizeof buf)) > 0) {
            text_.append(buf, static_cast<std::size_t>(n));
        }
        return text_;
    }

    // Waits until its output holds `what` (up to `timeout`).
    bool wait_output(const std::string& what, std::chrono::milliseconds timeout) {
        const auto until = Clock::now() + timeout;
        while (output().find(what) == std::string::npos) {
            if (Clock::now() >= until) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return true;
    }

    // SIGTERM, then waits for the exit; its exit status, -1 when it did not end in time.
    int terminate(std::chrono::milliseconds timeout) {
        ::kill(pid_, SIGTERM);
        const auto until = Clock::now() + timeout;
        while (Clock::now() < until) {
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }

private:
    pid_t pid_{-1};
    int out_{-1};
    std::string text_;
};

// The test's end of NOTIFY_SOCKET: an AF_UNIX datagram socket bound in a temp dir.
class NotifySocket {
public:
    explicit NotifySocket(const TempDir& dir)
        : path_(dir.file("notify")) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << path_;
    }

    ~NotifySocket() { ::close(fd_); }

    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;

    [[nodiscard]] std::string env() const { return "NOTIFY_SOCKET=" + path_; }

    // The next datagram holding `line` (others are skipped), or nullopt after `timeout`.
    std::optional<std::string> next(const std::string& line, std::chrono::milliseconds timeout) {
        const auto until = Clock::now() + timeout;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
            pollfd p{fd_, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
                return std::nullopt;
            }
            char buf[4096];
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) {
                return std::nullopt;
            }
            std::string msg(buf, static_cast<std::size_t>(n));
            if (("\n" + msg + "\n").find("\n" + line + "\n") != std::string::npos) {
                return msg;
            }
        }
    }

private:
    std::string path_;
    int fd_{-1};
};

std::vector<std::string> serve_argv(const TempDir& dir, unsigned port) {
    return {
        SLUICE_BINARY,
        "serve",
        "--listen",
        "127.0.0.1:" + std::to_string(port),
        "--data",
        dir.file("data"),
        "--no-token"};
}

// GET /healthz on 127.0.0.1:`port`, over a connection made now (no retry): the raw reply.
std::string healthz(unsigned port) {
    return raw_http(
        port,
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        std::chrono::seconds(20)); // the first one waits for a hub socket activation starts
}

TEST(Systemd, ServesOnTheSocketSocketActivationPasses) {
    TempDir dir;
    const unsigned port = free_port();
    std::vector<std::string> args{
        "/usr/bin/systemd-socket-activate", "-l", "127.0.0.1:" + std::to_string(port)};
    // serve's own --listen names another port: the passed socket is what it serves on.
    for (auto& a : serve_argv(dir, 1)) {
        args.push_back(std::move(a));
    }
    Child hub(args, {});
    ASSERT_TRUE(
        hub.wait_output("Listening on 127.0.0.1:" + std::to_string(port), std::chrono::seconds(10)))
        << hub.output();
    // systemd-socket-activate starts the hub at the first connection.
    const auto reply = healthz(port);
    EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply << hub.output();
    ASSERT_TRUE(hub.wait_output(
        "listening on http://127.0.0.1:" + std::to_string(port) + "\n", std::chrono::seconds(10)))
        << hub.output();
    EXPECT_NE(healthz(port).find("HTTP/1.1 200"), std::string::npos);
    EXPECT_EQ(hub.terminate(std::chrono::seconds(10)), 0) << hub.output();
}

TEST(Systemd, TellsReadyOnlyOnceTheListenerAccepts) {
    TempDir dir;
    NotifySocket notify(dir);
    const unsigned port = free_port();
    Child hub(serve_argv(dir, port), {notify.env()});
    const auto ready = notify.next("READY=1", std::chrono::seconds(20));
    ASSERT_TRUE(ready) << hub.output();
    // Right after READY=1, with no retry: the port accepts and answers.
    const auto reply = healthz(port);
    EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
    EXPECT_NE(
        ready->find("STATUS=listening on 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << *ready;
}

TEST(Systemd, PingsTheWatchdogWithinHalfItsInterval) {
    TempDir dir;
    NotifySocket notify(dir);
    Child hub(serve_argv(dir, free_port()), {notify.env(), "WATCHDOG_USEC=2000000"});
    ASSERT_TRUE(notify.next("READY=1", std::chrono::seconds(20))) << hub.output();
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(notify.next("WATCHDOG=1", std::chrono::milliseconds(1000))) << "ping " << i;
    }
}

TEST(Systemd, SendsNoWatchdogPingsWhenNoneWereAskedFor) {
    TempDir dir;
    NotifySocket notify(dir);
    Child hub(serve_argv(dir, free_port()), {notify.env()});
    ASSERT_TRUE(notify.next("READY=1", std::chrono::seconds(20))) << hub.output();
    EXPECT_FALSE(notify.next("WATCHDOG=1", std::chrono::milliseconds(1500)));
}

TEST(Systemd, TellsStoppingOnSigterm) {
    TempDir dir;
    NotifySocket notify(dir);
    Child hub(serve_argv(dir, free_port()), {notify.env()});
    ASSERT_TRUE(notify.next("READY=1", std::chrono::seconds(20))) << hub.output();
    ::kill(hub.pid(), SIGTERM);
    EXPECT_TRUE(notify.next("STOPPING=1", std::chrono::seconds(5))) << hub.output();
    EXPECT_EQ(hub.terminate(std::chrono::seconds(10)), 0) << hub.output();
}

} // namespace
} // namespace sluice::test
