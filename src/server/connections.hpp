// The server's open connections: a gate that counts them, refuses new ones once closed, asks
// each to stop, and reports when none is left (two-phase shutdown, STYLE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace sluice::server {

/// Open connections, each with a stop hook, and a gate in front of them.
///
/// @par Thread safety
/// Safe from any thread (a mutex guards the table; hooks and the drained callback are called
/// outside it).
class Connections : public std::enable_shared_from_this<Connections> {
public:
    /// How a connection is asked to stop. Called at most once per hook, from the thread that
    /// calls `close`; it must not block (post to the connection's strand).
    using Stop = std::function<void()>;

    /// One open connection's place in the table; leaves it when destroyed. Move-only.
    class Ticket {
    public:
        Ticket() = default;
        Ticket(Ticket&& other) noexcept;
        Ticket& operator=(Ticket&& other) noexcept;
        Ticket(const Ticket&) = delete;
        Ticket& operator=(const Ticket&) = delete;
        ~Ticket();

        /// Sets (replaces) how this connection stops. Once the gate is closed the hook is
        /// called at once, here.
        void on_stop(Stop fn);

        /// Whether this ticket holds a place.
        explicit operator bool() const noexcept { return owner_ != nullptr; }

    private:
        friend class Connections;

        Ticket(std::shared_ptr<Connections> owner, std::uint64_t id) noexcept
            : owner_(std::move(owner))
            , id_(id) {}

        void release() noexcept;
        std::shared_ptr<Connections> owner_;
        std::uint64_t id_{};
    };

    /// At most `limit` connections at once.
    explicit Connections(std::size_t limit) noexcept
        : limit_(limit) {}

    /// A place for a new connection; an empty ticket when the gate is closed or full.
    [[nodiscard]] Ticket enter();

    /// Closes the gate (no more `enter`), calls every stop hook, and calls `drained` once when
    /// the last connection has left (at once, here, when none is open). Later calls only
    /// replace nothing: the first `drained` stands.
    void close(std::function<void()> drained);

    /// Connections open now.
    [[nodiscard]] std::size_t open() const;
    /// Whether `close` has been called.
    [[nodiscard]] bool closing() const;

private:
    void leave(std::uint64_t id) noexcept;
    void set_stop(std::uint64_t id, Stop fn);

    mutable std::mutex mu_;
    std::size_t limit_;
    std::uint64_t next_id_{1};
    bool closing_{false};
    std::unordered_map<std::uint64_t, Stop> open_; // each open connection's stop hook
    std::function<void()> drained_;
};

} // namespace sluice::server
