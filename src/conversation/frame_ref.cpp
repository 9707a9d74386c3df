// Oversize frames: the reference form (head/tail previews, sizes, sha256) of a heavy frame.
#include <sluice/conversation/frame_ref.hpp>
#include <sluice/core/utf8.hpp>

#include <boost/json.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>

namespace sluice {

namespace json = boost::json;

std::string sha256_hex(std::string_view bytes) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int n = 0;
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(
        EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
    EVP_DigestFinal_ex(ctx.get(), md.data(), &n);
    static constexpr std::string_view HEX = "0123456789abcdef";
    std::string out;
    out.reserve(2U * n);
    for (unsigned int i = 0; i < n; ++i) {
        out += HEX[md[i] >> 4U];
        out += HEX[md[i] & 0x0fU];
    }
    return out;
}

namespace {

json::value reduce(const json::value& v, std::string& path, json::array& blocks);

// Copies `o` (never its large strings), cutting them, and records each cut in `blocks`.
json::object reduce_object(const json::object& in, std::string& path, json::array& blocks) {
    json::object o;
    o.reserve(in.size());
    for (const auto& kv : in) {
        const auto at = path.size();
        path += '/';
        for (const char c : kv.key()) { // JSON pointer escapes
            if (c == '~') {
                path += "~0";
            } else if (c == '/') {
                path += "~1";
            } else {
                path += c;
            }
        }
        o.emplace(kv.key(), reduce(kv.value(), path, blocks));
        path.resize(at);
    }
    return o;
}

// Copies `v`, cutting large strings, and records each cut in `blocks`.
json::value reduce(const json::value& v, std::string& path, json::array& blocks) {
    if (v.is_string()) {
        const std::string_view s = v.get_string();
        if (s.size() < FRAME_BLOCK_MIN_BYTES) {
            return v;
        }
        const auto head = utf8::floor_boundary(s, FRAME_PREVIEW_BYTES);
        const auto tail = utf8::ceil_boundary(s, s.size() - FRAME_PREVIEW_BYTES);
        const auto lines = static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '\n'))
                           + (s.ends_with('\n') ? 0U : 1U);
        std::string cut(s.substr(0, head));
        cut += "\n[… sluice: " + std::to_string(s.size()) + " bytes, " + std::to_string(lines)
               + " lines; the whole frame: GET /v1/seats/{seat}/frames/{seq} or --full …]\n";
        cut += s.substr(tail);
        blocks.push_back(json::object{
            {"path", path}, {"bytes", s.size()}, {"lines", lines}, {"sha256", sha256_hex(s)}});
        return json::string(cut);
    }
    if (v.is_object()) {
        return reduce_object(v.get_object(), path, blocks);
    }
    if (v.is_array()) {
        json::array a;
        a.reserve(v.get_array().size());
        std::size_t i = 0;
        for (const auto& e : v.get_array()) {
            const auto at = path.size();
            path += '/' + std::to_string(i++);
            a.push_back(reduce(e, path, blocks));
            path.resize(at);
        }
        return a;
    }
    return v;
}

} // namespace

bool is_reference_form(const Frame& f) {
    return f.wire_bytes() <= FRAME_INLINE_MAX_BYTES && f.row().contains("sluice_ref");
}

FramePtr held_form(FramePtr f) {
    if (!f || f->wire_bytes() <= FRAME_INLINE_MAX_BYTES || f->row().contains("sluice_ref")) {
        return f;
    }
    std::string path;
    json::array blocks;
    json::object row = reduce_object(f->row(), path, blocks);
    if (blocks.empty()) {
        return f; // heavy, but no large block to cut (many small values): held as it is
    }
    row["sluice_ref"] = json::object{
        {"bytes", f->wire_bytes()},
        {"sha256", sha256_hex(f->json())},
        {"blocks", std::move(blocks)}};
    return Frame::from_row(std::move(row));
}

} // namespace sluice
