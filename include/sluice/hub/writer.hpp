// Writer: the hub's bounded disk worker — blocking file work off the I/O threads.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace sluice::hub {

/// Most jobs a writer holds (queued or running). Basis: a seat keeps at most one transcript job
/// and one meta job in flight (it batches behind them), so 1,000 seats need 2,000; the rest
/// is room for syncs and seat removals.
inline constexpr std::size_t WRITER_QUEUE_CAPACITY = 4096;

/// One thread that runs blocking file work (transcript appends, fsyncs, meta.json writes,
/// folder removal) for one data directory, and hands each result back on the executor the
/// job names (a seat's strand). Jobs run one at a time, in submission order.
///
/// Bounded: at most `capacity` jobs are held. When full, `submit` runs nothing, queues nothing
/// and returns false; the caller treats that as a failed write (a seat ends its turn failed
/// and marks itself degraded) — it never blocks and never grows.
///
/// @par Thread safety
/// `submit`, `pending` are safe from any thread. The destructor runs every job already
/// submitted, then joins the thread; completions whose executor is gone are dropped.
class Writer {
public:
    /// A job: blocking work; its error_code is handed to the completion.
    using Job = std::function<boost::system::error_code()>;
    /// A completion: runs on the job's executor with the job's result.
    using Done = std::function<void(boost::system::error_code)>;

    /// A writer with its own thread. @param capacity most jobs held (see WRITER_QUEUE_CAPACITY).
    explicit Writer(std::size_t capacity = WRITER_QUEUE_CAPACITY);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    /// Runs `job` on the writer thread, then posts `done(result)` to `ex`.
    /// @return false (nothing queued, `done` never called) when `capacity` jobs are held.
    [[nodiscard]] bool submit(Job job, boost::asio::any_io_executor ex, Done done);

    /// Jobs held now (queued or running).
    [[nodiscard]] std::size_t pending() const noexcept;

    /// Waits until every job submitted so far has run (tests and shutdown; blocking).
    void drain();

private:
    struct State;
    std::shared_ptr<State> state_;
};

} // namespace sluice::hub
