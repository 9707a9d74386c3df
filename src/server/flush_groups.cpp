// FlushGroups: a seat's writes spread over the I/O threads (flush_groups.hpp).
#include "flush_groups.hpp"

#include <sluice/hub/seat.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>

namespace sluice::server {

namespace net = boost::asio;

static_assert(std::is_same_v<SeatStrand, hub::Seat::strand_type>);

void FlushGroup::add(std::shared_ptr<Flushable> w) {
    pending_.push_back(std::move(w));
    if (!scheduled_) {
        scheduled_ = true;
        net::post(strand_, [self = shared_from_this()] { self->dispatch(); });
    }
}

void FlushGroup::dispatch() {
    scheduled_ = false;
    auto all = std::exchange(pending_, {});
    // The next frame wakes about as many writers: one allocation for them, not one per doubling.
    pending_.reserve(all.size());
    auto first = all.begin();
    while (static_cast<std::size_t>(std::distance(first, all.end())) > FLUSH_CHUNK) {
        std::vector<std::shared_ptr<Flushable>> chunk(
            std::make_move_iterator(first), std::make_move_iterator(first + FLUSH_CHUNK));
        first += FLUSH_CHUNK;
        net::post(
            strand_.get_inner_executor(), [strand = strand_, chunk = std::move(chunk)]() mutable {
                for (const auto& w : chunk) {
                    w->flush_now();
                }
                net::post(strand, [chunk = std::move(chunk)] {
                    for (const auto& w : chunk) {
                        w->flushed();
                    }
                });
            });
    }
    for (auto it = first; it != all.end(); ++it) {
        (*it)->flush_now();
    }
    for (auto it = first; it != all.end(); ++it) {
        (*it)->flushed();
    }
}

std::shared_ptr<FlushGroup> FlushGroups::of(hub::Seat& seat) {
    const std::lock_guard lock(mu_);
    auto& slot = groups_[&seat];
    if (auto g = slot.lock()) {
        return g;
    }
    // A new group: drop those whose writers have all gone (a seat gone, or idle of viewers).
    std::erase_if(
        groups_, [&](const auto& kv) { return kv.second.expired() && kv.first != &seat; });
    auto g = std::make_shared<FlushGroup>(seat.strand());
    groups_[&seat] = g;
    return g;
}

} // namespace sluice::server
