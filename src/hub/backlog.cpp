// Backlog: a background thread of low priority working through queued tasks (hub/backlog.hpp).
#include <sluice/hub/backlog.hpp>

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <exception>
#include <utility>

namespace sluice::hub {

Backlog::Backlog(std::string name, std::size_t max, int nice)
    : name_(std::move(name))
    , max_(max)
    , nice_(nice)
    , thread_([this] { run(); }) {
}

Backlog::~Backlog() {
    stop();
}

Backlog::Added Backlog::add(Task task, bool bounded) {
    {
        std::lock_guard lock(mu_);
        if (stopping_) {
            return Added::stopped;
        }
        if (bounded && queue_.size() >= max_) {
            return Added::full;
        }
        queue_.push_back(std::move(task));
    }
    cv_.notify_all();
    return Added::queued;
}

std::size_t Backlog::waiting() const {
    std::lock_guard lock(mu_);
    return queue_.size();
}

void Backlog::wait_idle() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stopping_ || (queue_.empty() && !busy_); });
}

void Backlog::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        queue_.clear();
    }
    cv_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
        thread_.join();
    }
}

bool Backlog::stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
}

void Backlog::run() {
    // Best effort: on Linux a thread's nice value is its own (setpriority on its tid).
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), nice_);
    while (true) {
        Task task;
        {
            std::unique_lock lock(mu_);
            busy_ = false;
            cv_.notify_all();
            cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (stopping_) {
                return;
            }
            task = std::move(queue_.front());
            queue_.pop_front();
            busy_ = true;
        }
        try {
            task();
        } catch (const std::exception& e) {
            spdlog::error("{}: a background task failed: {}", name_, e.what());
        }
    }
}

} // namespace sluice::hub
