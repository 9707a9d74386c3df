// `--retain-archives-days`: the hub's reset archives and removed seats pruned at start and hourly.
#pragma once

#include <sluice/hub/hub.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>

namespace sluice::app {

/// Prunes `hub`'s archives older than `days` now and every hour (Hub::prune_archives, on the
/// writer), logging what each pruning removed. Nothing when `days` is 0.
///
/// @par Thread safety
/// Construct, start and destroy on one thread; the timer runs on `io`. Destroy before `hub`.
class ArchivePruning {
public:
    ArchivePruning(boost::asio::io_context& io, hub::Hub& hub, std::uint64_t days);
    ~ArchivePruning();
    ArchivePruning(const ArchivePruning&) = delete;
    ArchivePruning& operator=(const ArchivePruning&) = delete;

    /// Prunes once now and arms the hourly timer.
    void start();

private:
    void prune();

    boost::asio::io_context& io_;
    hub::Hub& hub_;
    std::chrono::seconds max_age_;
    boost::asio::steady_timer timer_;
};

} // namespace sluice::app
