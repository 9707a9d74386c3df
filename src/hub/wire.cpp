// Wire: every byte sluice puts on a stream or in an error body — JSON payloads, SSE, WebSocket.
#include <sluice/conversation/frame.hpp>
#include <sluice/hub/wire.hpp>

#include <boost/json.hpp>

#include <algorithm>

namespace sluice::hub::wire {

namespace json = boost::json;

namespace {

void append_quoted(std::string& s, std::string_view text) {
    s += json::serialize(json::value(json::string_view(text.data(), text.size())));
}

void append_frames(std::string& s, const PageTurn& t, bool& comma) {
    for (const auto& f : t.frames) {
        if (comma) {
            s += ',';
        }
        s += f->json();
        comma = true;
    }
}

void append_cursor(std::string& s, const Page& page) {
    s += R"(,"cursor":)";
    s += page.cursor ? std::to_string(*page.cursor) : std::string("null");
}

std::size_t page_bytes(const Page& page) {
    std::size_t n = 0;
    for (const auto& t : page.turns) {
        for (const auto& f : t.frames) {
            n += f->wire_bytes() + 1;
        }
    }
    return n;
}

} // namespace

const char* event_name(OutEvent::Kind k) noexcept {
    switch (k) {
    case OutEvent::Kind::connected:
        return "connected";
    case OutEvent::Kind::resumed:
        return "resumed";
    case OutEvent::Kind::frame:
        return "frame";
    case OutEvent::Kind::preview:
        return "preview";
    case OutEvent::Kind::gap:
        return "gap";
    case OutEvent::Kind::turn:
        return "turn";
    case OutEvent::Kind::permission:
        return "permission";
    }
    return "message";
}

namespace {

// The seat's state as GET /v1/seats names it, of those a viewer's head can tell.
const char* state_name(const SeatHead& head) noexcept {
    if (head.waiting) {
        return "waiting";
    }
    return head.running ? "running" : "idle";
}

// `,"permissions":[…]` when a prompt is pending (the array is the seat's own JSON text).
void append_permissions(std::string& s, const SeatHead& head) {
    if (!head.permissions.empty() && head.permissions != "[]") {
        s += R"(,"permissions":)";
        s += head.permissions;
    }
}

} // namespace

std::string connected_json(const SeatHead& head, const Page& page, std::uint64_t end) {
    std::uint64_t first = end;
    for (const auto& t : page.turns) {
        first = std::min(first, t.first);
    }
    std::string s;
    s.reserve(page_bytes(page) + 256);
    s += R"({"seat":)";
    append_quoted(s, head.seat);
    s += R"(,"epoch":)";
    append_quoted(s, head.epoch);
    s += R"(,"seq":)";
    s += std::to_string(head.seq);
    s += R"(,"recovered":false,"state":")";
    s += state_name(head);
    s += R"(","turn":)";
    s += std::to_string(head.turn);
    s += R"(,"window":{"first":)";
    s += std::to_string(first);
    s += R"(,"frames":[)";
    bool comma = false;
    for (const auto& t : page.turns) {
        append_frames(s, t, comma);
    }
    s += "]}";
    append_cursor(s, page);
    append_permissions(s, head);
    s += '}';
    return s;
}

std::string resumed_json(const SeatHead& head) {
    std::string s = R"({"seat":)";
    append_quoted(s, head.seat);
    s += R"(,"epoch":)";
    append_quoted(s, head.epoch);
    s += R"(,"seq":)";
    s += std::to_string(head.seq);
    s += R"(,"recovered":true,"state":")";
    s += state_name(head);
    s += '"';
    append_permissions(s, head);
    s += '}';
    return s;
}

std::string page_json(const Page& page, std::uint64_t end) {
    std::string s;
    s.reserve(page_bytes(page) + 64);
    s += R"({"turns":[)";
    bool first_turn = true;
    for (const auto& t : page.turns) {
        if (!first_turn) {
            s += ',';
        }
        first_turn = false;
        s += R"({"first":)";
        s += std::to_string(t.first);
        s += R"(,"frames":[)";
        bool comma = false;
        append_frames(s, t, comma);
        s += "]}";
    }
    s += ']';
    append_cursor(s, page);
    s += R"(,"end":)";
    s += std::to_string(end);
    s += '}';
    return s;
}

std::string preview_json(const StreamEvent& ev) {
    std::string s = R"({"kind":)";
    if (std::holds_alternative<llm::Text>(ev)) {
        s += R"("text")";
    } else if (std::holds_alternative<llm::Thinking>(ev)) {
        s += R"("thinking")";
    } else if (const auto* u = std::get_if<llm::ToolUseDelta>(&ev)) {
        s += R"("tool_use_delta","tool_id":)";
        append_quoted(s, u->tool_id);
    } else if (const auto* r = std::get_if<llm::ToolResultDelta>(&ev)) {
        s += R"("tool_result_delta","tool_id":)";
        append_quoted(s, r->tool_id);
    } else {
        s += R"("unknown")";
    }
    s += R"(,"delta":)";
    append_quoted(s, preview_payload(ev));
    s += '}';
    return s;
}

std::string gap_json(std::uint64_t dropped_bytes) {
    return R"({"dropped_bytes":)" + std::to_string(dropped_bytes) + "}";
}

std::string turn_json(std::uint64_t turn, std::string_view state, std::string_view error) {
    std::string s = R"({"turn":)";
    s += std::to_string(turn);
    s += R"(,"state":)";
    append_quoted(s, state);
    if (!error.empty()) {
        s += R"(,"error":)";
        append_quoted(s, error);
    }
    s += '}';
    return s;
}

// Appends `{"seq":<seq>,"row":` to `out`.
static void append_frame_data_head(std::string& out, std::uint64_t seq) {
    out += R"({"seq":)";
    out += std::to_string(seq);
    out += R"(,"row":)";
}

std::string frame_data_head(std::uint64_t seq) {
    std::string s;
    append_frame_data_head(s, seq);
    return s;
}

std::string frame_data(std::uint64_t seq, std::string_view row_json) {
    std::string s = frame_data_head(seq);
    s += row_json;
    s += FRAME_DATA_TAIL;
    return s;
}

// ---- error bodies --------------------------------------------------------------------------

std::string_view error_code_name(const boost::system::error_code& ec) noexcept {
    if (ec.category() != error_category()) {
        return "internal";
    }
    return errc_name(static_cast<errc>(ec.value()));
}

std::string error_body(std::string_view code, std::string_view message) {
    std::string s = R"({"error":{"code":)";
    append_quoted(s, code);
    s += R"(,"message":)";
    append_quoted(s, message);
    s += "}}";
    return s;
}

std::string error_body(const boost::system::error_code& ec, std::string_view message) {
    return error_body(error_code_name(ec), message);
}

// ---- SSE -----------------------------------------------------------------------------------

std::string sse_event(std::string_view name, std::string_view id, std::string_view data) {
    std::string s;
    s.reserve(name.size() + id.size() + data.size() + 24);
    if (!id.empty()) {
        s += "id: ";
        s += id;
        s += '\n';
    }
    s += "event: ";
    s += name;
    s += "\ndata: ";
    s += data;
    s += "\n\n";
    return s;
}

std::string sse_comment(std::string_view text) {
    std::string s;
    std::size_t from = 0;
    for (;;) {
        const auto nl = text.find('\n', from);
        s += ": ";
        s += text.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from);
        s += '\n';
        if (nl == std::string_view::npos) {
            break;
        }
        from = nl + 1;
    }
    s += '\n';
    return s;
}

// `{…}` + `,"partial":{…}` + `}`: a connected/resumed payload without its closing brace, then
// the shared partial, then `tail` (which closes it): gathered, never copied when shared.
static void splice_partial(const OutEvent& ev, Pieces& p, std::string_view tail) {
    const std::string_view whole = ev.json();
    if (ev.shared) {
        p.body = whole.substr(0, whole.size() - 1);
    } else {
        p.head += whole.substr(0, whole.size() - 1);
    }
    p.extra = *ev.partial;
    p.tail = tail;
}

SsePlaced sse_append(const OutEvent& ev, std::string& heads) {
    SsePlaced p;
    p.head_offset = heads.size();
    if (!ev.id.empty()) {
        heads += "id: ";
        heads += ev.id;
        heads += '\n';
    }
    heads += "event: ";
    heads += event_name(ev.kind);
    heads += "\ndata: ";
    if (ev.kind == OutEvent::Kind::frame) {
        static constexpr std::string_view FRAME_TAIL = "}\n\n";
        append_frame_data_head(heads, ev.seq);
        if (ev.frame) {
            p.body = ev.frame->json();
        }
        p.tail = FRAME_TAIL;
    } else if (ev.partial && !ev.json().empty()) {
        const std::string_view whole = ev.json();
        if (ev.shared) {
            p.body = whole.substr(0, whole.size() - 1);
        } else {
            heads += whole.substr(0, whole.size() - 1);
        }
        p.extra = *ev.partial;
        p.tail = "}\n\n";
    } else if (ev.shared) {
        p.body = *ev.shared;
        p.tail = "\n\n";
    } else {
        heads += ev.data;
        p.tail = "\n\n";
    }
    p.head_size = heads.size() - p.head_offset;
    return p;
}

SsePieces sse_pieces(const OutEvent& ev) {
    SsePieces p;
    const auto placed = sse_append(ev, p.head);
    p.body = placed.body;
    p.extra = placed.extra;
    p.tail = placed.tail;
    return p;
}

std::string sse_text(const OutEvent& ev) {
    auto p = sse_pieces(ev);
    std::string s = std::move(p.head);
    s += p.body;
    s += p.extra;
    s += p.tail;
    return s;
}

// ---- WebSocket -----------------------------------------------------------------------------

Pieces ws_pieces(const OutEvent& ev) {
    Pieces p;
    p.head = R"({"event":")";
    p.head += event_name(ev.kind);
    p.head += R"(","id":)";
    if (ev.id.empty()) {
        p.head += "null";
    } else {
        append_quoted(p.head, ev.id);
    }
    p.head += R"(,"data":)";
    if (ev.kind == OutEvent::Kind::frame) {
        static constexpr std::string_view FRAME_TAIL = "}}";
        append_frame_data_head(p.head, ev.seq);
        if (ev.frame) {
            p.body = ev.frame->json();
        } else {
            p.head += "null";
        }
        p.tail = FRAME_TAIL;
    } else if (ev.partial && !ev.json().empty()) {
        splice_partial(ev, p, "}}");
    } else if (ev.shared) {
        p.body = *ev.shared;
        p.tail = "}";
    } else {
        p.head += ev.data;
        p.tail = "}";
    }
    return p;
}

std::string ws_message(const OutEvent& ev) {
    auto p = ws_pieces(ev);
    std::string m = std::move(p.head);
    m += p.body;
    m += p.extra;
    m += p.tail;
    return m;
}

Pieces ws_reply_pieces(std::string_view name, std::string_view data_json) {
    Pieces p;
    p.head = R"({"event":")";
    p.head += name;
    p.head += R"(","id":null,"data":)";
    p.body = data_json;
    p.tail = "}";
    return p;
}

std::string ws_reply(std::string_view name, std::string_view data_json) {
    std::string m = R"({"event":)";
    append_quoted(m, name);
    m += R"(,"id":null,"data":)";
    m += data_json;
    m += '}';
    return m;
}

std::string ws_error(std::string_view code, std::string_view message) {
    return ws_reply("error", error_body(code, message));
}

} // namespace sluice::hub::wire
