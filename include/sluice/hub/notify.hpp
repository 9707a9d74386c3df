// Notifier: what the hub tells about events that need a person (a permission prompt waiting, a
// long turn ended or failed, a seat degraded); the push sender and webhooks implement it.
#pragma once

#include <sluice/runtime/agents/agent_events.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::hub {

/// One event that needs a person.
struct Notice {
    /// What happened.
    enum class Kind : std::uint8_t {
        permission,  ///< a permission prompt waits for an answer
        turn_ended,  ///< a turn longer than the threshold ended
        turn_failed, ///< a turn longer than the threshold failed
        degraded,    ///< the seat became degraded (a write failed)
        test,        ///< a person asked for a test push (to one subscription; no seat)
        budget,      ///< a turn crossed 80 % of the seat's or the day's budget
    };
    Kind kind{Kind::permission};
    std::string seat;       ///< the seat's id
    std::string title;      ///< the seat's name or title (may be empty)
    std::string tool;       ///< permission: the tool asking
    std::string summary;    ///< permission: the command or input, shortened; else the reason
                            ///< (budget: the notice row's text)
    std::string request_id; ///< permission: the prompt's id (to answer it)
    std::chrono::milliseconds took{}; ///< turn_*: how long the turn ran
};

/// The wire name of a notice's kind ("permission", "turn_ended", "turn_failed", "degraded",
/// "test", "budget").
[[nodiscard]] const char* kind_name(Notice::Kind k) noexcept;

/// Most bytes of a notice's `summary` (a command is shortened to this, at a character boundary).
inline constexpr std::size_t NOTICE_SUMMARY_MAX_BYTES = 300;

/// The notice of a waiting prompt: its tool, request id and a summary of its input (the
/// `command` of a shell tool, a `file_path`, a `url`, else the input's JSON), shortened.
[[nodiscard]] Notice permission_notice(const runtime::PermissionRequest& ask);

/// Where the hub sends notices. Implementations queue and return at once: `notify` is called on
/// a seat's strand and must never block nor do I/O there.
///
/// @par Thread safety
/// `notify` is safe from any thread.
class Notifier {
public:
    Notifier() = default;
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;
    Notifier(Notifier&&) = delete;
    Notifier& operator=(Notifier&&) = delete;
    virtual ~Notifier() = default;

    /// Takes `notice` to send later (or drops it, counted, when the queue is full).
    virtual void notify(Notice notice) = 0;
};

/// Turns shorter than this end without a notice, unless configured otherwise
/// (`serve --notify-long-turn`). Basis: a person waits at the screen for a short answer; one that
/// takes half a minute is when they look away.
inline constexpr std::chrono::milliseconds NOTIFY_LONG_TURN_DEFAULT{30'000};

} // namespace sluice::hub
