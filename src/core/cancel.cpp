// CancellationToken, built on std::stop_source.
#include <sluice/core/cancel.hpp>

namespace sluice {

CancelRegistration::CancelRegistration(std::unique_ptr<callback_type> cb) noexcept
    : cb_(std::move(cb)) {
}

CancelRegistration::~CancelRegistration() = default;

void CancellationToken::cancel() noexcept {
    source_.request_stop();
}

void CancellationToken::cancel(const char* why) noexcept {
    const char* none = nullptr;
    // Before the flag: a callback or a thread that sees the flag finds the reason set.
    reason_->compare_exchange_strong(none, why, std::memory_order_acq_rel);
    source_.request_stop();
}

const char* CancellationToken::reason() const noexcept {
    const char* why = reason_->load(std::memory_order_acquire);
    return why != nullptr ? why : "";
}

bool CancellationToken::is_cancelled() const noexcept {
    return source_.stop_requested();
}

CancelRegistration CancellationToken::on_cancel(std::function<void()> fn) const {
    return CancelRegistration{
        std::make_unique<CancelRegistration::callback_type>(source_.get_token(), std::move(fn))};
}

} // namespace sluice
