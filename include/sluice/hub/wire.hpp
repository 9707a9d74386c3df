// Wire: every byte sluice puts on a stream or in an error body — JSON payloads, SSE, WebSocket.
#pragma once

#include <sluice/conversation/window.hpp>
#include <sluice/core/error.hpp>
#include <sluice/core/event.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {
class Frame;
}

/// The sans-I/O wire encoding (no Asio include; pure functions, table-tested in
/// tests/unit/hub/wire_test.cpp).
///
/// It lives in `hub`, not in `server`, because the hub builds a seat's `connected` payload
/// once per window version and shares that one immutable string with every subscriber
/// resynced to it (a page can be megabytes), and `hub` may not include `server` (the one-way
/// module rule). The server only frames what this module encodes.
///
/// Every JSON payload here is compact (no raw newline), so one SSE `data:` line carries it.
namespace sluice::hub::wire {

/// One event for a subscriber, transport-neutral (SSE and WebSocket encode it).
struct OutEvent {
    /// The kinds of event a subscriber receives.
    enum class Kind : std::uint8_t { connected, resumed, frame, preview, gap, turn, permission };
    Kind kind{Kind::frame};             ///< what it is
    std::string id;                     ///< "<epoch>:<seq>" or empty (no id)
    std::shared_ptr<const Frame> frame; ///< for `frame`: shared, never copied
    std::uint64_t seq{};                ///< for `frame`: its position
    std::string data;                   ///< for every other kind: the JSON data
    /// For `connected`: the window page, shared by every subscriber resynced to the same
    /// window (built once, never copied per subscriber).
    std::shared_ptr<const std::string> shared;
    /// For `connected`/`resumed` mid-turn: `,"partial":{…}`, spliced before the payload's
    /// closing brace by the encoders; shared by every viewer joining at one preview version.
    std::shared_ptr<const std::string> partial;

    /// The JSON data of a non-frame event, wherever it is held.
    [[nodiscard]] const std::string& json() const noexcept { return shared ? *shared : data; }
};

/// The name of an event kind on the wire ("connected", "resumed", "frame", …).
[[nodiscard]] const char* event_name(OutEvent::Kind k) noexcept;

// ---- JSON payloads -------------------------------------------------------------------------

/// What a `connected` / `resumed` payload says about its seat besides the frames.
struct SeatHead {
    std::string_view seat;  ///< the seat id
    std::string_view epoch; ///< the seat's epoch
    std::int64_t seq{-1};   ///< the newest position the payload covers (-1: none)
    bool running{false};    ///< whether a turn runs ("running" / "idle")
    std::uint64_t turn{};   ///< the running turn, or the last accepted one
    /// The pending permission prompts, a JSON array of their rows; "" or "[]" leaves
    /// `"permissions"` out of the payload.
    std::string_view permissions{};
    /// Whether the agent waits on the person ("waiting", over running or idle): a permission
    /// prompt pending (a hosted seat's, or a terminal session's through its hooks), or a
    /// Notification hook; as `GET /v1/seats` says it.
    bool waiting{false};
};

/// `{"seat":…,"epoch":…,"seq":…,"recovered":false,"state":…,"turn":…,
/// "window":{"first":…,"frames":[…]},"cursor":…[,"permissions":[…]]}`: the window page a
/// subscriber starts from.
/// @param end the window's end, used as `first` when the page holds no turn.
[[nodiscard]] std::string connected_json(const SeatHead& head, const Page& page, std::uint64_t end);

/// `{"seat":…,"epoch":…,"seq":…,"recovered":true,"state":…[,"permissions":[…]]}`: a resume;
/// the replay follows.
[[nodiscard]] std::string resumed_json(const SeatHead& head);

/// `{"turns":[{"first":…,"frames":[…]},…],"cursor":…,"end":…}`: a page of history. `end` is the
/// position after the page's last frame: the page holds every frame from its first turn's `first`
/// up to it, so a client can tell where the page stops (and that nothing before `end` is missing).
[[nodiscard]] std::string page_json(const Page& page, std::uint64_t end);

/// `{"kind":"text"|"thinking"|"tool_use_delta"|"tool_result_delta"[,"tool_id":…],"delta":…}`.
/// @pre `is_preview(ev)`; a semantic event gives `{"kind":"unknown","delta":""}`.
[[nodiscard]] std::string preview_json(const StreamEvent& ev);

/// `{"dropped_bytes":N}`: preview bytes this subscriber lost since its last gap.
[[nodiscard]] std::string gap_json(std::uint64_t dropped_bytes);

/// `{"turn":N,"state":…[,"error":…]}`: a turn started, ended, failed or was cancelled.
/// @param error omitted when empty.
[[nodiscard]] std::string
turn_json(std::uint64_t turn, std::string_view state, std::string_view error = {});

/// `{"seq":N,"row":<frame json>}`: a frame's data (the pieces around the shared row are
/// `frame_data_head` and `FRAME_DATA_TAIL`, so a writer can gather the row without copying).
[[nodiscard]] std::string frame_data(std::uint64_t seq, std::string_view row_json);

/// `{"seq":N,"row":` — the bytes before a frame's row in its data.
[[nodiscard]] std::string frame_data_head(std::uint64_t seq);

/// The bytes after a frame's row in its data.
inline constexpr std::string_view FRAME_DATA_TAIL = "}";

// ---- error bodies --------------------------------------------------------------------------

/// The stable machine-readable name of an error ("bad_request", "not_found", …; "internal"
/// for a code outside sluice's category).
[[nodiscard]] std::string_view error_code_name(const boost::system::error_code& ec) noexcept;

/// `{"error":{"code":…,"message":…}}`.
[[nodiscard]] std::string error_body(std::string_view code, std::string_view message);

/// `{"error":{"code":<error_code_name(ec)>,"message":…}}`.
[[nodiscard]] std::string error_body(const boost::system::error_code& ec, std::string_view message);

// ---- SSE (text/event-stream) ---------------------------------------------------------------

/// A heartbeat comment, sent when a stream is idle for the heartbeat interval.
inline constexpr std::string_view SSE_HEARTBEAT = ": heartbeat\n\n";

/// The reconnection delay advertised at the start of a stream (EventSource `retry`, ms).
inline constexpr std::string_view SSE_RETRY = "retry: 1000\n\n";

/// `[id: <id>\n]event: <name>\ndata: <data>\n\n`. @pre `data` holds no newline.
[[nodiscard]] std::string
sse_event(std::string_view name, std::string_view id, std::string_view data);

/// `: <text>\n\n`, one `: ` line per line of `text` (e.g. the reason a stream is let go).
[[nodiscard]] std::string sse_comment(std::string_view text);

/// An encoded event in three pieces: `head` (owned, small), `body` (a view of the frame's row or
/// of the shared page, valid while the event lives; empty when the head holds everything) and
/// `tail` (static text). A writer gathers the three into one write, so a page or a frame is
/// never copied per client: what a client that never reads holds is this head plus a reference.
struct Pieces {
    std::string head;       ///< id/event lines and the start of the data line
    std::string_view body;  ///< gathered, not copied
    std::string_view extra; ///< gathered after `body`: a `connected`/`resumed` event's partial
    std::string_view tail;  ///< static text
};

/// The SSE form of `Pieces`: concatenated they are `sse_event(name, id, data)`.
using SsePieces = Pieces;

/// Encodes one event as SSE pieces, so frames and shared pages are gathered, never copied.
[[nodiscard]] SsePieces sse_pieces(const OutEvent& ev);

/// One event of a batch encoded as SSE: its head is a range of the batch's one head text, the
/// rest as in `Pieces`.
struct SsePlaced {
    std::size_t head_offset{}; ///< where the head starts in the batch's head text
    std::size_t head_size{};   ///< its length
    std::string_view body;     ///< gathered, not copied (as Pieces::body)
    std::string_view extra;    ///< gathered after `body` (as Pieces::extra)
    std::string_view tail;     ///< static text
};

/// Appends `ev`'s SSE head to `heads` and says where it went: a batch's heads share one text
/// (one allocation for the batch, not one per event), so a writing subscriber holds little
/// more than its references. The pieces equal `sse_pieces(ev)`'s.
SsePlaced sse_append(const OutEvent& ev, std::string& heads);

/// Encodes one event as SSE text (the pieces concatenated).
[[nodiscard]] std::string sse_text(const OutEvent& ev);

// ---- WebSocket -----------------------------------------------------------------------------

/// `{"event":<name>,"id":<id or null>,"data":<data>}`: one WebSocket text message per event.
[[nodiscard]] std::string ws_message(const OutEvent& ev);

/// The same message in pieces (head, the shared page or frame row, tail), gathered into one
/// WebSocket frame by the writer (a server frame is unmasked, so Beast sends the buffers as
/// they are).
[[nodiscard]] Pieces ws_pieces(const OutEvent& ev);

/// A reply to a client op around a shared payload (e.g. a history page): `ws_reply` in pieces.
/// @param name a plain event name (no character that needs JSON escaping).
[[nodiscard]] Pieces ws_reply_pieces(std::string_view name, std::string_view data_json);

/// `{"event":<name>,"id":null,"data":<data_json>}`: an answer to a client op ("sent",
/// "cancelled", "history"). @pre `data_json` is JSON.
[[nodiscard]] std::string ws_reply(std::string_view name, std::string_view data_json);

/// `{"event":"error","id":null,"data":{"error":{"code":…,"message":…}}}`.
[[nodiscard]] std::string ws_error(std::string_view code, std::string_view message);

} // namespace sluice::hub::wire
