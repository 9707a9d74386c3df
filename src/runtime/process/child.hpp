// Child: a process in its own group, its pipes and its exit as Asio objects (private to runtime).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::runtime::detail {

/// A child process started with fork/exec into its own process group. Its stdin, stdout and
/// stderr are `posix::stream_descriptor`s on the given executor; its exit is observed on the
/// io_context through a pidfd (readable once it exits), then reaped with `waitpid`. No thread,
/// no poll(2), no blocking wait.
///
/// The destructor never blocks: a child not reaped yet gets SIGKILL (its whole group) and is
/// reaped at once if it is already gone, else by an asynchronous wait on its pidfd.
///
/// @par Thread safety
/// Confined to its executor (a strand or a single-threaded io_context), except `signal_group`,
/// which only sends a signal and is safe from any thread.
class Child {
public:
    /// How to start the child.
    struct Options {
        std::vector<std::string> argv; ///< argv[0] is looked up in PATH
        std::string cwd;               ///< working directory (empty: inherit)
        bool stdin_pipe{false};        ///< stdin from a pipe (else /dev/null)
        bool separate_stderr{false};   ///< stderr to its own pipe (else merged into stdout)
        /// "NAME=value" entries set on top of this process's environment (replacing the same
        /// names); empty: the environment as it is.
        std::vector<std::string> env;
    };

    /// Starts the child; on failure returns nullptr and sets `error` (exec failures included).
    /// @param ex the executor of the pipes, the pidfd and the terminate timer.
    static std::unique_ptr<Child>
    spawn(const boost::asio::any_io_executor& ex, const Options& options, std::string& error);

    ~Child();
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    Child(Child&&) = delete;
    Child& operator=(Child&&) = delete;

    /// The child's pid (also its process group id).
    [[nodiscard]] int pid() const noexcept { return pid_; }

    /// Its stdout (read end); closed once we closed it.
    boost::asio::posix::stream_descriptor& out() noexcept { return out_; }

    /// Its stderr (read end) if separate; never open otherwise.
    boost::asio::posix::stream_descriptor& err() noexcept { return err_; }

    /// Its stdin (write end) if piped; never open otherwise.
    boost::asio::posix::stream_descriptor& in() noexcept { return in_; }

    /// Sends `sig` to the whole process group (no-op once reaped).
    void signal_group(int sig) noexcept;

    /// Waits (asynchronously) until the child exits and reaps it.
    /// @param kill_stragglers SIGKILL what is left of its process group before reaping it (the
    ///   zombie leader still reserves the group id, so the signal cannot reach a stranger).
    /// @return its wait status. At most one wait at a time; a cancelled wait may be retried.
    /// @throws boost::system::system_error with operation_aborted when cancelled.
    boost::asio::awaitable<int> wait_exit(bool kill_stragglers = false);

    /// Ends the child: SIGTERM to its group now, SIGKILL after `grace` (a steady_timer) unless it
    /// was reaped by then. Returns at once; `wait_exit` observes the end.
    void terminate(std::chrono::milliseconds grace);

    /// SIGKILL to its group after `grace` unless it was reaped by then (a child that closed its
    /// output but lingers). Returns at once; replaces an earlier deadline.
    void kill_after(std::chrono::milliseconds grace);

    /// The wait status if reaped.
    [[nodiscard]] std::optional<int> status() const noexcept { return status_; }

    /// Writes all of `data` to its stdin (the descriptor is non-blocking; readiness is awaited on
    /// the io_context). A reader that went away is `broken_pipe`, never a SIGPIPE: the signal is
    /// blocked on this thread around each write and a pending one is consumed.
    /// @return success, or the error (the caller then closes stdin).
    boost::asio::awaitable<boost::system::error_code> write_stdin(std::string_view data);

    /// A one-line description of a wait status ("exit status 1", "killed by signal 9").
    [[nodiscard]] static std::string describe_status(int status);

private:
    explicit Child(const boost::asio::any_io_executor& ex);
    bool try_reap() noexcept;

    boost::asio::any_io_executor ex_;
    int pid_{-1};
    boost::asio::posix::stream_descriptor pidfd_;
    boost::asio::posix::stream_descriptor in_;
    boost::asio::posix::stream_descriptor out_;
    boost::asio::posix::stream_descriptor err_;
    boost::asio::steady_timer kill_timer_;
    std::optional<int> status_;
    std::shared_ptr<int> alive_{std::make_shared<int>(0)}; // a timer handler's guard on `this`
};

} // namespace sluice::runtime::detail
