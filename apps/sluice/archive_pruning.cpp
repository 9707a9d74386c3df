// ArchivePruning (archive_pruning.hpp).
#include "archive_pruning.hpp"

#include <spdlog/spdlog.h>

namespace sluice::app {

namespace {
// Hourly: an archive outlives its retention by an hour at most.
constexpr std::chrono::hours PRUNE_INTERVAL{1};
} // namespace

ArchivePruning::ArchivePruning(boost::asio::io_context& io, hub::Hub& hub, std::uint64_t days)
    : io_(io)
    , hub_(hub)
    , max_age_(std::chrono::hours(24) * days)
    , timer_(io) {
}

ArchivePruning::~ArchivePruning() {
    timer_.cancel();
}

void ArchivePruning::start() {
    if (max_age_.count() == 0) {
        return;
    }
    prune();
}

void ArchivePruning::prune() {
    hub_.prune_archives(max_age_, io_.get_executor(), [](hub::Pruned p) {
        if (p.files + p.folders > 0) {
            spdlog::info(
                "archives pruned: {} reset archive(s), {} removed seat folder(s), {} bytes",
                p.files,
                p.folders,
                p.bytes);
        }
    });
    timer_.expires_after(PRUNE_INTERVAL);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            prune();
        }
    });
}

} // namespace sluice::app
