// The connection gate: count, stop hooks, drained callback.
#include "connections.hpp"

#include <utility>
#include <vector>

namespace sluice::server {

Connections::Ticket::Ticket(Ticket&& other) noexcept
    : owner_(std::move(other.owner_))
    , id_(std::exchange(other.id_, 0)) {
}

Connections::Ticket& Connections::Ticket::operator=(Ticket&& other) noexcept {
    if (this != &other) {
        release();
        owner_ = std::move(other.owner_);
        id_ = std::exchange(other.id_, 0);
    }
    return *this;
}

Connections::Ticket::~Ticket() {
    release();
}

void Connections::Ticket::release() noexcept {
    if (owner_) {
        owner_->leave(id_);
        owner_.reset();
    }
}

void Connections::Ticket::on_stop(Stop fn) {
    if (owner_) {
        owner_->set_stop(id_, std::move(fn));
    }
}

Connections::Ticket Connections::enter() {
    std::lock_guard lock(mu_);
    if (closing_ || open_.size() >= limit_) {
        return {};
    }
    const auto id = next_id_++;
    open_.emplace(id, Stop{});
    return {shared_from_this(), id};
}

void Connections::set_stop(std::uint64_t id, Stop fn) {
    {
        std::lock_guard lock(mu_);
        auto it = open_.find(id);
        if (it == open_.end()) {
            return;
        }
        if (!closing_) {
            it->second = std::move(fn);
            return;
        }
        it->second = nullptr; // already asked to stop: this hook runs now, once
    }
    if (fn) {
        fn();
    }
}

void Connections::leave(std::uint64_t id) noexcept {
    std::function<void()> drained;
    {
        std::lock_guard lock(mu_);
        open_.erase(id);
        if (closing_ && open_.empty()) {
            drained = std::move(drained_);
            drained_ = nullptr;
        }
    }
    if (drained) {
        drained();
    }
}

void Connections::close(std::function<void()> drained) {
    std::vector<Stop> hooks;
    std::function<void()> now;
    bool none_open = false;
    {
        std::lock_guard lock(mu_);
        if (closing_) {
            return;
        }
        closing_ = true;
        hooks.reserve(open_.size());
        for (auto& [id, hook] : open_) {
            if (hook) {
                hooks.push_back(std::move(hook));
                hook = nullptr;
            }
        }
        none_open = open_.empty();
        if (none_open) {
            now = std::move(drained);
        } else {
            drained_ = std::move(drained);
        }
    }
    for (auto& h : hooks) {
        h();
    }
    if (now) {
        now(); // none was open: drained at once, here
    }
}

std::size_t Connections::open() const {
    std::lock_guard lock(mu_);
    return open_.size();
}

bool Connections::closing() const {
    std::lock_guard lock(mu_);
    return closing_;
}

} // namespace sluice::server
