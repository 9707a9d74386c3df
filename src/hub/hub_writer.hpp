// Hub, private: a job on the hub's writer thread, its result handed to an executor.
#pragma once

#include <sluice/hub/hub.hpp>

#include <boost/asio/post.hpp>

#include <memory>
#include <optional>

namespace sluice::hub {

template <class T>
void Hub::on_writer(
    std::function<Result<T>()> job,
    const boost::asio::any_io_executor& ex,
    std::function<void(Result<T>)> done) {
    auto out = std::make_shared<std::optional<Result<T>>>();
    const bool queued = writer_->submit(
        [job = std::move(job), out]() {
            out->emplace(job());
            return boost::system::error_code{};
        },
        ex,
        [out, done](boost::system::error_code) {
            done(out->has_value() ? std::move(**out) : Result<T>(Failure::of(errc::io_error, "")));
        });
    if (!queued) {
        boost::asio::post(ex, [done = std::move(done)]() {
            done(Failure::of(errc::overloaded, "the disk queue is full; try again"));
        });
    }
}

} // namespace sluice::hub
