// ChildProcess: fork/exec with pipes, own process group, exec failure reported through a pipe.
#include "child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

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
    char* const* argv, const char* cwd, int in_fd, int out_fd, int err_fd, int report_fd) {
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
    ::execvp(argv[0], argv);
    const int e = errno;
    [[maybe_unused]] auto n = ::write(report_fd, &e, sizeof e);
    ::_exit(127);
}

} // namespace

std::unique_ptr<ChildProcess> ChildProcess::spawn(const Options& options, std::string& error) {
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
    const int err_target = options.separate_stderr ? err_pipe[1] : out_pipe[1];
    const pid_t pid = ::fork();
    if (pid < 0) {
        error = std::string("fork failed: ") + std::strerror(errno);
        close_all();
        return nullptr;
    }
    if (pid == 0) {
        exec_child(argv.data(), cwd, in_pipe[0], out_pipe[1], err_target, report[1]);
    }
    // Parent. Also set the group here so a kill right after spawn cannot miss it.
    ::setpgid(pid, pid);
    close_fd(report[1]);
    close_fd(in_pipe[0]);
    close_fd(out_pipe[1]);
    close_fd(err_pipe[1]);
    int child_errno = 0;
    ssize_t n = 0;
    do {
        n = ::read(report[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    close_fd(report[0]);

    std::unique_ptr<ChildProcess> cp(new ChildProcess());
    cp->pid_ = pid;
    cp->stdin_fd_ = in_pipe[1];
    cp->stdout_fd_ = out_pipe[0];
    cp->stderr_fd_ = err_pipe[0];
    for (int fd : {cp->stdin_fd_, cp->stdout_fd_, cp->stderr_fd_}) {
        if (fd >= 0) {
            set_nonblocking(fd);
        }
    }
    if (n > 0) {
        error = "cannot run '" + options.argv[0] + "': " + std::strerror(child_errno);
        cp->wait();
        return nullptr;
    }
    return cp;
}

ChildProcess::~ChildProcess() {
    if (!status_) {
        kill_group(SIGKILL);
        wait();
    }
    close_stdin();
    close_stdout();
    close_stderr();
}

void ChildProcess::close_stdin() noexcept { close_fd(stdin_fd_); }

void ChildProcess::close_stdout() noexcept { close_fd(stdout_fd_); }

void ChildProcess::close_stderr() noexcept { close_fd(stderr_fd_); }

void ChildProcess::kill_group(int sig) noexcept {
    if (pid_ > 0 && !status_) {
        ::kill(-pid_, sig);
    }
}

std::optional<int> ChildProcess::try_wait() noexcept {
    if (!status_ && pid_ > 0) {
        int st = 0;
        pid_t r = 0;
        do {
            r = ::waitpid(pid_, &st, WNOHANG);
        } while (r < 0 && errno == EINTR);
        if (r == pid_) {
            status_ = st;
        } else if (r < 0) {
            status_ = 0; // not our child any more (reaped elsewhere): treat as gone
        }
    }
    return status_;
}

int ChildProcess::wait() noexcept {
    if (!status_ && pid_ > 0) {
        int st = 0;
        pid_t r = 0;
        do {
            r = ::waitpid(pid_, &st, 0);
        } while (r < 0 && errno == EINTR);
        status_ = r == pid_ ? st : 0;
    }
    return status_.value_or(0);
}

std::string ChildProcess::describe_status(int status) {
    if (WIFEXITED(status)) {
        return "exit status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return "killed by signal " + std::to_string(WTERMSIG(status));
    }
    return "status " + std::to_string(status);
}

WakeFd::WakeFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) {
        throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    }
}

WakeFd::~WakeFd() { close_fd(fd_); }

void WakeFd::notify() const noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
}

void WakeFd::drain() const noexcept {
    std::uint64_t v = 0;
    [[maybe_unused]] auto n = ::read(fd_, &v, sizeof v);
}

} // namespace sluice::runtime::detail
