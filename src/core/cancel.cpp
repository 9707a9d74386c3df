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

bool CancellationToken::is_cancelled() const noexcept {
    return source_.stop_requested();
}

CancelRegistration CancellationToken::on_cancel(std::function<void()> fn) const {
    return CancelRegistration{
        std::make_unique<CancelRegistration::callback_type>(source_.get_token(), std::move(fn))};
}

} // namespace sluice
