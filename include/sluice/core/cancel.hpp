// CancellationToken: a shared, copyable cancel flag with callbacks, for a turn and its work.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <stop_token>

namespace sluice {

/// Keeps a cancel callback registered; destroying it unregisters the callback.
/// If the callback is running on another thread, destruction waits for it to return.
class CancelRegistration {
public:
    /// An empty registration.
    CancelRegistration() = default;

    /// Unregisters the callback (blocks while it runs on another thread).
    ~CancelRegistration();

    CancelRegistration(CancelRegistration&&) noexcept = default;
    CancelRegistration& operator=(CancelRegistration&&) noexcept = default;
    CancelRegistration(const CancelRegistration&) = delete;
    CancelRegistration& operator=(const CancelRegistration&) = delete;

private:
    friend class CancellationToken;
    using callback_type = std::stop_callback<std::function<void()>>;
    explicit CancelRegistration(std::unique_ptr<callback_type> cb) noexcept;
    std::unique_ptr<callback_type> cb_;
};

/// A handle to one cancellation flag; copies share the flag.
///
/// Cancelling is one-way and idempotent. Callbacks registered with `on_cancel` run once, on the
/// thread that calls `cancel()` (or at once, on the registering thread, if already cancelled).
///
/// @par Thread safety
/// Safe from any thread.
class CancellationToken {
public:
    /// A fresh, uncancelled token.
    CancellationToken() = default;

    /// Cancels the flag and runs every registered callback. Idempotent.
    void cancel() noexcept;

    /// Cancels as `cancel()` does, recording why (the first reason given wins), for the record
    /// the cancelled work leaves: e.g. "cancelled by the user", "interrupted by a hub restart".
    /// @param why a string with static storage duration (a literal); kept by pointer.
    void cancel(const char* why) noexcept;

    /// Why the token was cancelled: the first reason given, or "" (not cancelled, or cancelled
    /// without one).
    [[nodiscard]] const char* reason() const noexcept;

    /// Whether `cancel()` has been called on this token or a copy.
    [[nodiscard]] bool is_cancelled() const noexcept;

    /// Registers `fn` to run on cancellation; keep the result alive as long as `fn` may run.
    /// @param fn must not throw; runs at most once.
    [[nodiscard]] CancelRegistration on_cancel(std::function<void()> fn) const;

    /// The std::stop_token view of this flag, for code built on <stop_token>.
    [[nodiscard]] std::stop_token stop_token() const noexcept { return source_.get_token(); }

private:
    std::stop_source source_;
    std::shared_ptr<std::atomic<const char*>> reason_ =
        std::make_shared<std::atomic<const char*>>(nullptr);
};

} // namespace sluice
