// Child: fork/exec into a process group; pipes, pidfd exit and terminate on the io_context.
#include "process/child.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

namespace sluice::runtime::detail {

namespace {

void close_fd(int& fd) noexcept {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

void set_nonblocking(int fd) noexcept {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) {
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    }
}

// Child side after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(
    char* const* argv,
    char* const* envp,
    const char* cwd,
    int in_fd,
    int out_fd,
    int err_fd,
    int report_fd) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL); // a parent that ignores SIGPIPE must not pass that on
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (cwd != nullptr && ::chdir(cwd) != 0) {
        const int e = errno;
        [[maybe_unused]] auto n = ::write(report_fd, &e, sizeof e);
        ::_exit(127);
    }
    if (envp != nullptr) {
        ::execvpe(argv[0], argv, envp);
    } else {
        ::execvp(argv[0], argv);
    }
    const int e = errno;
    [[maybe_unused]] auto n = ::write(report_fd, &e, sizeof e);
    ::_exit(127);
}

// Reaps `pid` if it exited; its wait status.
std::optional<int> reap(int pid) noexcept {
    int st = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid, &st, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid) {
        return st;
    }
    if (r < 0) {
        return 0; // not our child any more (reaped elsewhere): treat as gone
    }
    return std::nullopt;
}

// Whether `pid` exited (a zombie now), without reaping it.
bool exited(int pid) noexcept {
    siginfo_t info{};
    int r = 0;
    do {
        r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (r < 0 && errno == EINTR);
    return r < 0 || info.si_pid == pid;
}

} // namespace

Child::Child(const net::any_io_executor& ex)
    : ex_(ex)
    , pidfd_(ex)
    , in_(ex)
    , out_(ex)
    , err_(ex)
    , kill_timer_(ex) {
}

std::unique_ptr<Child>
Child::spawn(const net::any_io_executor& ex, const Options& options, std::string& error) {
    if (options.argv.empty()) {
        error = "empty command";
        return nullptr;
    }
    std::vector<std::string> args = options.argv;
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);

    int in_pipe[2] = {-1, -1};
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    int report[2] = {-1, -1};
    auto close_all = [&] {
        for (int* p : {in_pipe, out_pipe, err_pipe, report}) {
            close_fd(p[0]);
            close_fd(p[1]);
        }
    };
    bool ok = ::pipe2(out_pipe, O_CLOEXEC) == 0 && ::pipe2(report, O_CLOEXEC) == 0;
    if (ok && options.stdin_pipe) {
        ok = ::pipe2(in_pipe, O_CLOEXEC) == 0;
    } else if (ok) {
        in_pipe[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ok = in_pipe[0] >= 0;
    }
    if (ok && options.separate_stderr) {
        ok = ::pipe2(err_pipe, O_CLOEXEC) == 0;
    }
    if (!ok) {
        error = std::string("cannot create pipes: ") + std::strerror(errno);
        close_all();
        return nullptr;
    }
    const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
    // The child's environment, built before fork (no allocation after it).
    std::vector<std::string> env_strings;
    std::vector<char*> envp;
    if (!options.env.empty()) {
        const auto overridden = [&options](std::string_view entry) {
            const auto name = entry.substr(0, entry.find('=') + 1);
            return std::any_of(options.env.begin(), options.env.end(), [name](const auto& e) {
                return std::string_view(e).substr(0, name.size()) == name;
            });
        };
        for (char** e = environ; *e != nullptr; ++e) {
            if (!overridden(*e)) {
                env_strings.emplace_back(*e);
            }
        }
        env_strings.insert(env_strings.end(), options.env.begin(), options.env.end());
        for (auto& e : env_strings) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);
    }
    const int err_target = options.separate_stderr ? err_pipe[1] : out_pipe[1];
    const pid_t pid = ::fork();
    if (pid < 0) {
        error = std::string("fork failed: ") + std::strerror(errno);
        close_all();
        return nullptr;
    }
    if (pid == 0) {
        exec_child(
            argv.data(),
            envp.empty() ? nullptr : envp.data(),
            cwd,
            in_pipe[0],
            out_pipe[1],
            err_target,
            report[1]);
    }
    // Parent. Also set the group here so a kill right after spawn cannot miss it.
    ::setpgid(pid, pid);
    close_fd(report[1]);
    close_fd(in_pipe[0]);
    close_fd(out_pipe[1]);
    close_fd(err_pipe[1]);
    // The exec report: EOF (close-on-exec) once exec succeeded, an errno if it failed. This
    // read returns as soon as the child execs or dies: it never waits on the child's work.
    int child_errno = 0;
    ssize_t n = 0;
    do {
        n = ::read(report[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    close_fd(report[0]);

    std::unique_ptr<Child> cp(new Child(ex));
    cp->pid_ = pid;
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        cp->pidfd_.assign(pidfd);
    }
    for (int fd : {in_pipe[1], out_pipe[0], err_pipe[0]}) {
        if (fd >= 0) {
            set_nonblocking(fd);
        }
    }
    if (in_pipe[1] >= 0) {
        cp->in_.assign(in_pipe[1]);
    }
    cp->out_.assign(out_pipe[0]);
    if (err_pipe[0] >= 0) {
        cp->err_.assign(err_pipe[0]);
    }
    if (pidfd < 0) {
        error = std::string("pidfd_open failed: ") + std::strerror(errno);
        return nullptr; // the destructor kills and reaps it
    }
    if (n > 0) {
        error = "cannot run '" + options.argv[0] + "': " + std::strerror(child_errno);
        return nullptr; // it already exited (127); the destructor reaps it
    }
    return cp;
}

Child::~Child() {
    boost::system::error_code ignored;
    in_.close(ignored);
    out_.close(ignored);
    err_.close(ignored);
    if (status_ || pid_ <= 0) {
        return;
    }
    ::kill(-pid_, SIGKILL);
    if (reap(pid_) || !pidfd_.is_open()) {
        return;
    }
    // Not gone yet (SIGKILL is asynchronous): reap it when its pidfd turns readable, on the
    // io_context, so the destructor never blocks.
    // Allocating may throw: then the child is reaped by nobody but is already killed.
    const int pid = pid_;
    try {
        auto fd = std::make_shared<net::posix::stream_descriptor>(std::move(pidfd_));
        fd->async_wait(
            net::posix::stream_descriptor::wait_read,
            [fd, pid](boost::system::error_code) { (void)reap(pid); });
    } catch (const std::exception& e) {
        spdlog::error("process {}: cannot watch its exit after SIGKILL: {}", pid, e.what());
    }
}

void Child::signal_group(int sig) noexcept {
    if (pid_ > 0 && !status_) {
        ::kill(-pid_, sig);
    }
}

bool Child::try_reap() noexcept {
    if (!status_) {
        status_ = reap(pid_);
    }
    return status_.has_value();
}

net::awaitable<int> Child::wait_exit(bool kill_stragglers) {
    while (!status_) {
        if (exited(pid_)) {
            if (kill_stragglers) {
                ::kill(-pid_, SIGKILL);
            }
            if (try_reap()) {
                kill_timer_.cancel();
                break;
            }
        }
        co_await pidfd_.async_wait(net::posix::stream_descriptor::wait_read, net::use_awaitable);
    }
    co_return *status_;
}

void Child::terminate(std::chrono::milliseconds grace) {
    signal_group(SIGTERM);
    kill_after(grace);
}

void Child::kill_after(std::chrono::milliseconds grace) {
    if (status_) {
        return;
    }
    kill_timer_.expires_after(grace);
    // A handler already queued when the Child goes away must not touch it: hence the guard.
    kill_timer_.async_wait(
        [this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
            if (!ec && !alive.expired()) {
                signal_group(SIGKILL);
            }
        });
}

net::awaitable<boost::system::error_code> Child::write_stdin(std::string_view data) {
    while (!data.empty()) {
        if (!in_.is_open()) {
            co_return net::error::bad_descriptor;
        }
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        sigset_t old;
        ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
        const auto w = ::write(in_.native_handle(), data.data(), data.size());
        const int e = errno;
        if (w < 0 && e == EPIPE) {
            timespec zero{};
            ::sigtimedwait(&pipe_set, nullptr, &zero); // consume the SIGPIPE we caused
        }
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        if (w > 0) {
            data.remove_prefix(static_cast<std::size_t>(w));
            continue;
        }
        if (w < 0 && e == EINTR) {
            continue;
        }
        if (w < 0 && e == EAGAIN) {
            auto [ec] = co_await in_.async_wait(
                net::posix::stream_descriptor::wait_write, net::as_tuple(net::use_awaitable));
            if (ec) {
                co_return ec;
            }
            continue;
        }
        co_return boost::system::error_code(e == 0 ? EPIPE : e, boost::system::system_category());
    }
    co_return boost::system::error_code{};
}

std::string Child::describe_status(int status) {
    if (WIFEXITED(status)) {
        return "exit status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return "killed by signal " + std::to_string(WTERMSIG(status));
    }
    return "status " + std::to_string(status);
}

} // namespace sluice::runtime::detail
