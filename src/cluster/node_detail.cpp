// Cluster node, private: the helpers its files share (registry entries, stream replies).
#include "node_detail.hpp"

#include <sluice/conversation/frame.hpp>

#include <spdlog/spdlog.h>
#define ZLIB_CONST // next_in is a pointer to const: no cast of a frame's bytes
#include <zlib.h>

#include <charconv>

namespace sluice::cluster::detail {

namespace json = boost::json;
using boost::system::error_code;
using redis::Reply;

hub::SeatState parse_state(std::string_view s) {
    for (auto st :
         {hub::SeatState::idle,
          hub::SeatState::running,
          hub::SeatState::queued,
          hub::SeatState::unavailable,
          hub::SeatState::degraded,
          hub::SeatState::waiting}) {
        if (s == hub::state_name(st)) {
            return st;
        }
    }
    return hub::SeatState::idle;
}

std::string entry_json(const hub::SeatSummary& s, const std::string& node) {
    json::object o;
    o["node"] = node;
    o["name"] = s.name;
    o["agent"] = s.agent;
    o["epoch"] = s.epoch;
    o["state"] = hub::state_name(s.state);
    o["degraded"] = s.degraded;
    o["reason"] = s.reason;
    o["turns"] = s.turns;
    o["frames"] = s.frames;
    return json::serialize(o);
}

std::string str_of(const json::object& o, std::string_view k) {
    if (const auto* v = o.if_contains(k); v != nullptr && v->is_string()) {
        return std::string(v->as_string());
    }
    return {};
}

std::uint64_t num_of(const json::object& o, std::string_view k) {
    if (const auto* v = o.if_contains(k); v != nullptr && v->is_number()) {
        return v->to_number<std::uint64_t>();
    }
    return 0;
}

std::uint64_t to_u64(const std::string& s) {
    try {
        return std::stoull(s);
    } catch (const std::exception&) {
        return 0;
    }
}

Entries parse_entries(const Reply& r) {
    Entries out;
    for (const auto& e : r.elements) {
        if (e.elements.size() != 2) {
            continue;
        }
        const auto seq = to_u64(e.elements[0].str.substr(0, e.elements[0].str.find('-')));
        if (out.frames.empty()) {
            out.first = seq;
        } else if (seq != out.first + out.frames.size()) {
            out.contiguous = false;
        }
        MirrorFrame mf;
        const auto& fv = e.elements[1].elements;
        for (std::size_t i = 0; i + 1 < fv.size(); i += 2) {
            if (fv[i].str == "f") {
                if (auto j = load_frame(fv[i + 1].str)) {
                    if (auto f = Frame::parse(*j)) {
                        mf.frame = *f;
                    }
                }
            } else if (fv[i].str == "o") {
                mf.opens = fv[i + 1].str == "1";
            }
        }
        if (!mf.frame) {
            out.contiguous = false; // not a frame: never served
            continue;
        }
        out.frames.push_back(std::move(mf));
    }
    return out;
}

void log_failure(const char* what, const error_code& ec, const Reply& r) {
    if (ec) {
        spdlog::warn("cluster: {}: {}", what, ec.message());
    } else if (r.is_error()) {
        spdlog::warn("cluster: {}: {}", what, r.str);
    }
}

namespace {

/// Frames shorter than this are stored plain: deflate's block overhead eats the gain.
constexpr std::size_t STORE_DEFLATE_MIN_BYTES = 64;

// One deflate and one inflate state per thread, reset per frame: a fresh state costs ~270 KiB
// of zeroed memory, more than a frame's compression.
struct Deflater {
    Deflater() = default;

    ~Deflater() { deflateEnd(&z); }

    Deflater(const Deflater&) = delete;
    Deflater& operator=(const Deflater&) = delete;
    z_stream z{};
    bool ok{deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK};
};

struct Inflater {
    Inflater() = default;

    ~Inflater() { inflateEnd(&z); }

    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;
    z_stream z{};
    bool ok{inflateInit2(&z, -15) == Z_OK};
};

} // namespace

std::string store_frame(std::string_view json) {
    if (json.size() < STORE_DEFLATE_MIN_BYTES) {
        return std::string(json);
    }
    thread_local Deflater d;
    if (!d.ok || deflateReset(&d.z) != Z_OK) {
        return std::string(json);
    }
    std::string out = "z" + std::to_string(json.size()) + ":";
    const auto head = out.size();
    const auto bound = deflateBound(&d.z, static_cast<uLong>(json.size()));
    out.resize(head + bound);
    d.z.next_in = reinterpret_cast<const Bytef*>(json.data());
    d.z.avail_in = static_cast<uInt>(json.size());
    d.z.next_out = reinterpret_cast<Bytef*>(out.data() + head);
    d.z.avail_out = static_cast<uInt>(bound);
    if (deflate(&d.z, Z_FINISH) != Z_STREAM_END) {
        return std::string(json);
    }
    out.resize(head + (bound - d.z.avail_out));
    if (out.size() >= json.size()) {
        return std::string(json); // incompressible: plain is smaller
    }
    return out;
}

std::optional<std::string> load_frame(std::string_view stored) {
    if (!stored.empty() && stored.front() == '{') {
        return std::string(stored);
    }
    const auto colon = stored.find(':');
    if (stored.empty() || stored.front() != 'z' || colon == std::string_view::npos) {
        return std::nullopt;
    }
    std::size_t len = 0;
    const auto* first = stored.data() + 1;
    const auto* last = stored.data() + colon;
    if (auto [p, ec] = std::from_chars(first, last, len); ec != std::errc{} || p != last) {
        return std::nullopt;
    }
    // The window holds frames in their held form (an oversize one by reference, see
    // FRAME_INLINE_MAX_BYTES): a damaged entry's absurd length is refused, not allocated.
    if (len > (std::size_t{64} << 20)) {
        return std::nullopt;
    }
    thread_local Inflater f;
    if (!f.ok || inflateReset(&f.z) != Z_OK) {
        return std::nullopt;
    }
    std::string out(len, '\0');
    const auto in = stored.substr(colon + 1);
    f.z.next_in = reinterpret_cast<const Bytef*>(in.data());
    f.z.avail_in = static_cast<uInt>(in.size());
    f.z.next_out = reinterpret_cast<Bytef*>(out.data());
    f.z.avail_out = static_cast<uInt>(len);
    if (inflate(&f.z, Z_FINISH) != Z_STREAM_END || f.z.avail_out != 0) {
        return std::nullopt;
    }
    return out;
}

std::string preview_notice(
    std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) {
    std::string s = "p ";
    s += epoch;
    s += ' ';
    s += std::to_string(pos);
    s += ' ';
    s += std::to_string(offset);
    s += '\n';
    if (std::holds_alternative<llm::Text>(ev)) {
        s += 't';
    } else if (std::holds_alternative<llm::Thinking>(ev)) {
        s += 'h';
    } else if (const auto* u = std::get_if<llm::ToolUseDelta>(&ev)) {
        s += 'u';
        s += u->tool_id;
    } else if (const auto* r = std::get_if<llm::ToolResultDelta>(&ev)) {
        s += 'r';
        s += r->tool_id;
    }
    s += '\n';
    s += preview_payload(ev);
    return s;
}

std::optional<StreamEvent> parse_preview(std::string_view body) {
    const auto nl = body.find('\n');
    if (body.empty() || nl == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string id(body.substr(1, nl - 1));
    std::string bytes(body.substr(nl + 1));
    switch (body[0]) {
    case 't':
        return StreamEvent{llm::Text{std::move(bytes)}};
    case 'h':
        return StreamEvent{llm::Thinking{std::move(bytes)}};
    case 'u':
        return StreamEvent{llm::ToolUseDelta{id, std::move(bytes)}};
    case 'r':
        return StreamEvent{llm::ToolResultDelta{id, std::move(bytes)}};
    default:
        return std::nullopt;
    }
}

} // namespace sluice::cluster::detail
