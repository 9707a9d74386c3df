// LineProcess: an agent process speaking JSON lines on stdio.
#include "agents/line_process.hpp"

#include "agents/turn_queue.hpp"

#include <sluice/detail/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <exception>
#include <utility>
#include <vector>

namespace sluice::runtime::detail {

namespace {

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

// Basis: enough of the agent's stderr to explain why it died, in one error line.
constexpr std::size_t STDERR_TAIL_BYTES = 2048;

// Basis: one pipe's default capacity on Linux; a read never holds more than this at once.
constexpr std::size_t READ_CHUNK_BYTES = 64 * 1024;

} // namespace

std::string ProcessGone::describe(const std::string& who) const {
    if (too_long != 0) {
        return who + " wrote a line longer than " + std::to_string(too_long) + " bytes";
    }
    std::string msg =
        who + " exited (" + (status ? Child::describe_status(*status) : std::string("gone")) + ")";
    // Its last stderr line says why, when it said anything.
    auto tail = stderr_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) {
        tail.pop_back();
    }
    if (const auto nl = tail.rfind('\n'); nl != std::string::npos) {
        tail.erase(0, nl + 1);
    }
    if (!tail.empty()) {
        msg += ": " + tail;
    }
    return msg;
}

std::shared_ptr<LineProcess> LineProcess::spawn(
    const net::any_io_executor& ex, Options options, Handlers handlers, std::string& error) {
    options.child.stdin_pipe = true;
    options.child.separate_stderr = true;
    auto child = Child::spawn(ex, options.child, error);
    if (!child) {
        return nullptr;
    }
    auto proc =
        std::make_shared<LineProcess>(std::move(child), std::move(options), std::move(handlers));
    proc->start();
    return proc;
}

LineProcess::LineProcess(std::unique_ptr<Child> child, Options options, Handlers handlers)
    : child_(std::move(child))
    , options_(std::move(options))
    , handlers_(std::move(handlers)) {
}

void LineProcess::start() {
    const auto ex = child_->out().get_executor();
    net::co_spawn(
        ex,
        [self = shared_from_this()] { return self->read_stdout(); },
        [](const std::exception_ptr& e) { log_escaped(e, "process stdout"); });
    net::co_spawn(
        ex,
        [self = shared_from_this()] { return self->read_stderr(); },
        [](const std::exception_ptr& e) { log_escaped(e, "process stderr"); });
    net::co_spawn(
        ex,
        [self = shared_from_this()] { return self->watch_exit(); },
        [](const std::exception_ptr& e) { log_escaped(e, "process exit"); });
}

int LineProcess::pid() const noexcept {
    return child_->pid();
}

bool LineProcess::writable() const noexcept {
    return !gone_ && child_->in().is_open();
}

void LineProcess::send(std::string line) {
    if (!writable()) {
        return;
    }
    outbox_.push_back(std::move(line));
    if (writing_) {
        return;
    }
    writing_ = true;
    net::co_spawn(
        child_->out().get_executor(),
        [self = shared_from_this()] { return self->write_stdin(); },
        [](const std::exception_ptr& e) { log_escaped(e, "process stdin"); });
}

void LineProcess::terminate() {
    if (gone_) {
        return;
    }
    boost::system::error_code ignored;
    child_->in().close(ignored);
    outbox_.clear();
    child_->terminate(options_.terminate_grace);
}

net::awaitable<void> LineProcess::write_stdin() {
    while (!outbox_.empty()) {
        const auto ec = co_await child_->write_stdin(outbox_.front());
        if (ec) {
            // The agent closed stdin or died: stop writing; its exit says the rest.
            boost::system::error_code ignored;
            child_->in().close(ignored);
            outbox_.clear();
            break;
        }
        outbox_.pop_front();
    }
    writing_ = false;
}

net::awaitable<void> LineProcess::read_stderr() {
    std::array<char, 4096> buf{};
    while (true) {
        auto [ec, n] = co_await child_->err().async_read_some(net::buffer(buf), TUPLE);
        if (n > 0) {
            keep_tail(std::string_view(buf.data(), n));
        }
        if (ec) {
            co_return;
        }
    }
}

void LineProcess::keep_tail(std::string_view data) {
    err_tail_.append(data);
    if (err_tail_.size() > STDERR_TAIL_BYTES) {
        err_tail_.erase(0, err_tail_.size() - STDERR_TAIL_BYTES);
    }
}

net::awaitable<void> LineProcess::read_stdout() {
    // Held across the handlers: one may drop its owner's last reference to this process.
    auto self = shared_from_this();
    std::vector<char> buf(READ_CHUNK_BYTES);
    while (!out_done_) {
        auto [ec, n] = co_await child_->out().async_read_some(net::buffer(buf), TUPLE);
        std::string_view data(buf.data(), n);
        while (!data.empty() && !out_done_) {
            const auto nl = data.find('\n');
            const auto piece = data.substr(0, nl);
            if (line_.size() + piece.size() > options_.max_line_bytes) {
                line_too_long();
                co_return;
            }
            line_.feed(piece);
            if (nl == std::string_view::npos) {
                break;
            }
            data.remove_prefix(nl + 1);
            const bool had_bytes = line_.size() > 0;
            auto value = line_.take();
            const bool malformed = had_bytes && value.is_null();
            if (handlers_.on_line && !gone_) {
                handlers_.on_line(std::move(value), malformed);
            }
        }
        if (ec && !out_done_) {
            // Its output ended: it should be exiting. Give it the terminate grace, then kill.
            out_done_ = true;
            boost::system::error_code ignored;
            child_->in().close(ignored);
            child_->kill_after(options_.terminate_grace);
        }
    }
    maybe_gone();
}

net::awaitable<void> LineProcess::watch_exit() {
    auto self = shared_from_this();
    // Stragglers of its group are killed so its stdout reaches EOF.
    status_ = co_await child_->wait_exit(/*kill_stragglers=*/true);
    maybe_gone();
}

void LineProcess::line_too_long() {
    out_done_ = true;
    line_.clear();
    child_->signal_group(SIGKILL);
    too_long_ = options_.max_line_bytes;
    maybe_gone();
}

void LineProcess::maybe_gone() {
    if (gone_ || !out_done_ || (!status_ && too_long_ == 0)) {
        return;
    }
    gone_ = true;
    // What is left of its stderr (the reader may not have had its turn yet): non-blocking.
    if (child_->err().is_open()) {
        std::array<char, 4096> buf{};
        while (true) {
            const auto n = ::read(child_->err().native_handle(), buf.data(), buf.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            keep_tail(std::string_view(buf.data(), static_cast<std::size_t>(n)));
        }
    }
    boost::system::error_code ignored;
    child_->in().close(ignored);
    outbox_.clear();
    if (too_long_ == 0) {
        // A killed process's stderr stays open until its exit is reaped (watch_exit).
        child_->err().close(ignored);
    }
    if (handlers_.on_gone) {
        handlers_.on_gone(
            ProcessGone{.status = status_, .stderr_tail = err_tail_, .too_long = too_long_});
    }
}

} // namespace sluice::runtime::detail
