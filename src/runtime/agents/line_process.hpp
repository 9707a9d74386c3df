// LineProcess: an agent process speaking one JSON value per line on stdio, its pipes and exit on
// an executor.
#pragma once

#include "agents/line_parser.hpp"
#include "process/child.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::runtime::detail {

/// Why a LineProcess is gone (LineProcess::Handlers::on_gone).
struct ProcessGone {
    std::optional<int> status; ///< its wait status (none: killed for a too long line)
    std::string stderr_tail;   ///< the last bytes of its stderr
    std::size_t too_long{0};   ///< non-zero: it wrote a line longer than this many bytes

    /// One line for a person: "the agent exited (exit status 1): <its last stderr line>", or
    /// "the agent wrote a line longer than N bytes"; `who` replaces "the agent".
    [[nodiscard]] std::string describe(const std::string& who = "the agent") const;
};

/// One hosted agent process: stdout read as lines (each parsed as JSON while it arrives, at most
/// `max_line_bytes`), stdin written in order by one writer, the last bytes of stderr kept to
/// explain an exit, the exit observed through the child's pidfd. Every handler runs on the
/// executor; `on_gone` runs exactly once, after the last `on_line`, once the output ended and
/// the process was reaped (or at once for a too long line, the process then killed).
///
/// Shared by its reader, stderr reader, exit watcher and writer coroutines: it lives until they
/// all ended, whatever its owner does.
///
/// @par Thread safety
/// Confined to its executor (a strand or a single-threaded io_context).
class LineProcess : public std::enable_shared_from_this<LineProcess> {
public:
    struct Handlers {
        /// A whole line: its JSON value, null when blank; `malformed` when it is not JSON.
        std::function<void(boost::json::value line, bool malformed)> on_line;
        /// The process is gone; nothing follows.
        std::function<void(const ProcessGone& gone)> on_gone;
    };

    struct Options {
        Child::Options child;                         ///< what to start (stdin piped, stderr apart)
        std::size_t max_line_bytes{32 * 1024 * 1024}; ///< a longer stdout line ends the process
        std::chrono::milliseconds terminate_grace{2'000}; ///< SIGTERM → SIGKILL
    };

    /// Starts the process; nullptr and `error` set when it cannot start.
    static std::shared_ptr<LineProcess> spawn(
        const boost::asio::any_io_executor& ex,
        Options options,
        Handlers handlers,
        std::string& error);

    /// Use `spawn` (it starts the readers once the object is shared).
    LineProcess(std::unique_ptr<Child> child, Options options, Handlers handlers);

    /// Queues `line` (ending in '\n') for stdin; dropped once stdin is closed.
    void send(std::string line);

    /// Whether stdin still takes lines.
    [[nodiscard]] bool writable() const noexcept;

    /// Whether on_gone ran.
    [[nodiscard]] bool gone() const noexcept { return gone_; }

    /// Ends it: stdin closed, SIGTERM to its group, SIGKILL after the grace. on_gone follows.
    void terminate();

    /// Its process id.
    [[nodiscard]] int pid() const noexcept;

private:
    void start();
    boost::asio::awaitable<void> read_stdout();
    boost::asio::awaitable<void> read_stderr();
    boost::asio::awaitable<void> watch_exit();
    boost::asio::awaitable<void> write_stdin();
    void keep_tail(std::string_view data);
    void line_too_long();
    void maybe_gone();

    std::unique_ptr<Child> child_;
    Options options_;
    Handlers handlers_;
    LineParser line_;
    std::string err_tail_;
    std::deque<std::string> outbox_;
    bool writing_{false};
    bool out_done_{false};      // stdout reached EOF (or reading stopped)
    std::optional<int> status_; // the wait status once reaped
    std::size_t too_long_{0};
    bool gone_{false};
};

} // namespace sluice::runtime::detail
