// RelayReader: a relay read from a coroutine, waiting events taken without a trip through the
// executor.
#pragma once

#include <sluice/core/relay.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <optional>

namespace sluice {

/// Reads a relay from a coroutine (the runtime's agents, `sluice run`).
///
/// `next()` hands over an event at once, with no post and no allocation beyond its coroutine
/// frame, while the receiver holds one and fewer than RELAY_CHANNEL_CAPACITY were taken that
/// way in a row; otherwise it awaits `async_next`, whose completion is posted. A producer that
/// never pauses therefore cannot keep the consumer's thread from its other handlers longer than
/// one batch, and a prompt consumer does not pay a post and an operation per event (bench
/// `BM_RelayAsyncConsumer` against `BM_RelayAsyncNextEach`, bench/RESULTS.md, issue 31).
///
/// Its waits complete on the awaiting coroutine's executor.
///
/// @par Thread safety
/// One coroutine at a time; the receiver must outlive the reader.
class RelayReader {
public:
    /// Reads `rx`.
    explicit RelayReader(RelayReceiver& rx) noexcept
        : rx_(rx) {}

    /// The next event; nullopt at the relay's end, or when the wait was cancelled through the
    /// coroutine's cancellation slot (then `error()` is `operation_aborted` and the relay is
    /// intact: a later `next()` continues where this one left off).
    boost::asio::awaitable<std::optional<StreamEvent>> next();

    /// Why the last `next()` returned nullopt without the relay ending; empty otherwise.
    [[nodiscard]] boost::system::error_code error() const noexcept { return error_; }

private:
    RelayReceiver& rx_;
    std::size_t taken_{}; // events handed over at once since the last wait
    boost::system::error_code error_;
};

} // namespace sluice
