// A sans-I/O Server-Sent Events parser (WHATWG event-stream rules), fed bytes as they arrive.
#pragma once

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::sse {

/// One dispatched event.
struct Event {
    std::string type{"message"};          ///< the `event:` field, "message" when absent
    std::string data{};                   ///< `data:` lines joined by "\n" (no trailing newline)
    std::string id{};                     ///< the last event id seen so far in the stream
    std::optional<std::uint64_t> retry{}; ///< a `retry:` value given in this event, if any
};

/// Size limits; a line or an event over its limit is an error, never unbounded growth.
struct Limits {
    /// Longest line kept (bytes). Basis: the largest line in the shared fixtures is a 60 KiB
    /// web_search_tool_result block; 8 MiB leaves room for big tool inputs.
    std::size_t max_line{8U << 20U};
    /// Largest event (sum of its data lines, bytes).
    std::size_t max_event{16U << 20U};
};

/// Whether an event's data is the OpenAI end marker `[DONE]` (surrounding whitespace ignored).
[[nodiscard]] bool is_done(const Event& ev) noexcept;

/// Parses an event stream incrementally: any split of the bytes across `feed` calls gives the
/// same events (CR, LF and CRLF line ends, a CRLF split across feeds, a leading UTF-8 BOM).
///
/// @par Thread safety
/// None: one stream, one thread at a time.
class Parser {
public:
    /// A parser with the given limits.
    explicit Parser(Limits limits = {}) noexcept;

    /// Parses `bytes`, appending every completed event to `out`.
    /// @return errc::payload_too_large once a line or an event passes its limit (the parser is
    ///   then failed: later calls return the same error and produce nothing).
    boost::system::error_code feed(std::string_view bytes, std::vector<Event>& out);

    /// Whether bytes of an unfinished line or event are pending (a stream cut mid-event).
    [[nodiscard]] bool has_partial() const noexcept;

    /// Comment lines (starting with ':') seen so far.
    [[nodiscard]] std::uint64_t comments() const noexcept { return comments_; }

private:
    void process_line(std::string_view line, std::vector<Event>& out);
    void dispatch(std::vector<Event>& out);

    Limits limits_;
    std::string line_;    // a line split across feeds
    std::string data_;    // the event being built
    std::string type_;    // its `event:` field
    std::string last_id_; // the stream's last event id
    std::optional<std::uint64_t> retry_;
    bool have_data_{false};   // a data field was seen (even an empty one)
    bool fields_seen_{false}; // any field of the pending event (for has_partial)
    bool after_cr_{false};    // the previous feed ended with CR: skip a leading LF
    bool bom_checked_{false};
    bool failed_{false};
    std::uint64_t comments_{};
};

} // namespace sluice::sse
