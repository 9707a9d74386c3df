// ChildProcess: fork/exec a command in its own process group with piped stdio (private to runtime).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::runtime::detail {

/// A child process in its own process group. The destructor kills the group (SIGKILL) if the
/// child was not reaped yet, and reaps it, so no child outlives its owner.
///
/// @par Thread safety
/// None: one owner thread (kill_group may be called from another thread: it only sends a signal).
class ChildProcess {
public:
    /// How to start the child.
    struct Options {
        std::vector<std::string> argv; ///< argv[0] is looked up in PATH
        std::string cwd;               ///< working directory (empty: inherit)
        bool stdin_pipe{false};        ///< stdin from a pipe (else /dev/null)
        bool separate_stderr{false};   ///< stderr to its own pipe (else merged into stdout)
    };

    /// Starts the child; on failure returns nullptr and sets `error` (exec failures included).
    static std::unique_ptr<ChildProcess> spawn(const Options& options, std::string& error);

    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ChildProcess(ChildProcess&&) = delete;
    ChildProcess& operator=(ChildProcess&&) = delete;

    /// The child's pid (also its process group id).
    [[nodiscard]] int pid() const noexcept { return pid_; }
    /// Read end of its stdout (non-blocking), or -1 once closed.
    [[nodiscard]] int stdout_fd() const noexcept { return stdout_fd_; }
    /// Read end of its stderr (non-blocking) if separate, else -1.
    [[nodiscard]] int stderr_fd() const noexcept { return stderr_fd_; }
    /// Write end of its stdin (non-blocking) if piped, else -1.
    [[nodiscard]] int stdin_fd() const noexcept { return stdin_fd_; }

    /// Closes our end of its stdin / stdout / stderr.
    void close_stdin() noexcept;
    void close_stdout() noexcept;
    void close_stderr() noexcept;

    /// Sends `sig` to the whole process group (no-op once reaped).
    void kill_group(int sig) noexcept;

    /// Reaps the child if it exited; its wait status, or nullopt while it runs.
    std::optional<int> try_wait() noexcept;

    /// Blocks until the child exits; its wait status.
    int wait() noexcept;

    /// A one-line description of a wait status ("exit status 1", "killed by signal 9").
    [[nodiscard]] static std::string describe_status(int status);

private:
    ChildProcess() = default;
    int pid_{-1};
    int stdin_fd_{-1};
    int stdout_fd_{-1};
    int stderr_fd_{-1};
    std::optional<int> status_;
};

/// A wake-up file descriptor (eventfd) to interrupt poll() from another thread.
class WakeFd {
public:
    WakeFd();
    ~WakeFd();
    WakeFd(const WakeFd&) = delete;
    WakeFd& operator=(const WakeFd&) = delete;
    WakeFd(WakeFd&&) = delete;
    WakeFd& operator=(WakeFd&&) = delete;

    /// The fd to poll for POLLIN.
    [[nodiscard]] int fd() const noexcept { return fd_; }
    /// Makes `fd()` readable. Safe from any thread, async-signal-safe.
    void notify() const noexcept;
    /// Clears the readable state.
    void drain() const noexcept;

private:
    int fd_{-1};
};

} // namespace sluice::runtime::detail
