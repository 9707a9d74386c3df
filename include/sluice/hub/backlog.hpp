// Backlog: one background thread of low priority that works through queued tasks in order —
// what the search indexer and the usage scanner run their reading on.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sluice::hub {

/// A thread that runs queued tasks one at a time, in order, at a lower priority than the hub's
/// I/O threads (Linux's per-thread nice value), so a backlog of reading leaves the cores to the
/// seats. Bounded: at most `max` tasks wait; `add` refuses beyond it (the caller says what it
/// dropped), unless told the task must not be dropped (rare work, such as a seat's removal).
///
/// Callers keep their own "is this already queued" state under their own lock, set before `add`
/// and cleared by the task as it starts: a change announced after that is either seen by the
/// task's read or queues the task again.
///
/// @par Thread safety
/// Every member is safe from any thread; `stop` (and the destructor) must not run on the
/// backlog's own thread.
class Backlog {
public:
    /// A task; an exception it throws is logged under `name`, and the next task runs.
    using Task = std::function<void()>;

    /// A backlog named `name` (in logs) of at most `max` waiting tasks, its thread at nice
    /// `nice`; the thread starts now.
    Backlog(std::string name, std::size_t max, int nice);
    ~Backlog();
    Backlog(const Backlog&) = delete;
    Backlog& operator=(const Backlog&) = delete;

    /// What `add` did.
    enum class Added : unsigned char {
        queued,  ///< the task will run
        full,    ///< `max` tasks wait: not queued
        stopped, ///< the backlog is stopped: not queued
    };

    /// Queues `task`, unless the backlog is stopped, or `max` tasks wait and `bounded` is true.
    [[nodiscard]] Added add(Task task, bool bounded = true);

    /// How many tasks wait (not counting the one running).
    [[nodiscard]] std::size_t waiting() const;

    /// Blocks until nothing waits and nothing runs (tests, benches, shutdown order).
    void wait_idle();

    /// Stops the thread after the task running now; what waits is dropped. Idempotent.
    void stop();

    /// Whether `stop` was called: a long task checks it between chunks of its work.
    [[nodiscard]] bool stopping() const;

private:
    void run();

    std::string name_;
    std::size_t max_;
    int nice_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Task> queue_;
    bool busy_{false};
    bool stopping_{false};
    std::thread thread_; // last: starts once the rest is made
};

} // namespace sluice::hub
