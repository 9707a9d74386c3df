// The whole-file scan's per-row work, three ways over the same Claude Code-shaped rows:
// simdjson's DOM (RowScanner, what `transcript index|turns` use), a Boost.JSON basic_parser
// handler that keeps only the turn scan's fields, and the full Frame::parse the scans used before.
#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/row_scan.hpp>
#include <sluice/conversation/turns.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;

// Rows shaped as bench/transcript_window.sh writes them (same mix, text with escapes and
// multi-byte characters), joined as one buffer of lines with simdjson's padding at the end.
struct Rows {
    std::string buf;
    std::vector<std::string_view> lines;
};

const Rows& rows() {
    static const Rows r = [] {
        std::mt19937 rnd(1);
        const std::vector<std::string> words = {
            "the",
            "of",
            "function",
            "return",
            "error",
            "\"quoted\"",
            "tab\there",
            "new\nline",
            "café",
            "😀",
            "{json}",
            "[array]",
            "\\backslash",
            "output",
            "file",
            "path"};
        auto text = [&](std::size_t n) {
            std::string s;
            while (s.size() < n) {
                s += words[rnd() % words.size()] + " ";
            }
            return s;
        };
        auto env = [](json::object o, int n) {
            o["parentUuid"] = "p" + std::to_string(n);
            o["isSidechain"] = false;
            o["userType"] = "external";
            o["cwd"] = "/work/project";
            o["sessionId"] = "2b5a3a4e-8d2c-4f4e-9d1e-0c3f8a1b2c3d";
            o["version"] = "2.0.55";
            o["uuid"] = "u" + std::to_string(n);
            o["timestamp"] = "2026-01-01T00:00:00.000Z";
            return o;
        };
        Rows out;
        std::vector<std::string> rows;
        for (int turn = 0; turn < 200; ++turn) {
            rows.push_back(json::serialize(
                env({{"type", "user"}, {"message", {{"role", "user"}, {"content", text(600)}}}},
                    turn)));
            for (int k = 0; k < 8; ++k) {
                const std::string tid = "toolu_" + std::to_string(turn) + "_" + std::to_string(k);
                rows.push_back(json::serialize(
                    env({{"type", "system"},
                         {"subtype", "thinking_tokens"},
                         {"estimated_tokens_delta", 700}},
                        k)));
                rows.push_back(json::serialize(
                    env({{"type", "assistant"},
                         {"message",
                          {{"role", "assistant"},
                           {"content",
                            json::array{
                                {{"type", "thinking"},
                                 {"thinking", text(3000)},
                                 {"signature", text(300)}}}}}}},
                        k)));
                rows.push_back(json::serialize(
                    env({{"type", "assistant"},
                         {"message",
                          {{"role", "assistant"},
                           {"content",
                            json::array{
                                {{"type", "tool_use"},
                                 {"id", tid},
                                 {"name", "Bash"},
                                 {"input", {{"command", text(150)}}}}}}}}},
                        k)));
                const auto res = text(std::vector<std::size_t>{300, 2000, 8000, 30000}[k % 4]);
                rows.push_back(json::serialize(env(
                    {{"type", "user"},
                     {"message",
                      {{"role", "user"},
                       {"content",
                        json::array{
                            {{"tool_use_id", tid}, {"type", "tool_result"}, {"content", res}}}}}},
                     {"toolUseResult", {{"stdout", res}, {"stderr", ""}}}},
                    k)));
            }
            rows.push_back(
                R"({"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01"})");
        }
        for (const auto& r : rows) {
            out.buf += r + "\n";
        }
        out.buf.append(sluice::ROW_SCAN_PADDING, ' ');
        // The views are taken once the buffer (with its padding) is final.
        std::size_t at = 0;
        for (const auto& r : rows) {
            out.lines.emplace_back(out.buf.data() + at, r.size());
            at += r.size() + 1;
        }
        return out;
    }();
    return r;
}

std::size_t bytes_of(const Rows& r) {
    std::size_t n = 0;
    for (auto l : r.lines) {
        n += l.size() + 1;
    }
    return n;
}

void BM_RowScanSimdjsonDom(benchmark::State& state) {
    const auto& r = rows();
    sluice::RowScanner scanner;
    std::string type;
    sluice::TurnFacts facts;
    for (auto _ : state) {
        sluice::TurnScan scan;
        std::size_t opens = 0;
        for (auto l : r.lines) {
            if (scanner.scan(l, type, facts) == sluice::RowKind::frame) {
                opens += scan.opens_turn(type, facts) ? 1 : 0;
            }
        }
        benchmark::DoNotOptimize(opens);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_of(r)));
}

BENCHMARK(BM_RowScanSimdjsonDom);

// A basic_parser handler that validates everything and keeps only what the turn scan reads: the
// top-level type and flags, message.content (a string, or its blocks' type/text/ids/name).
// NOLINTBEGIN(readability-identifier-naming,readability-convert-member-functions-to-static)
// NOLINTBEGIN(readability-named-parameter)
struct FactsHandler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);
    using ec_t = boost::system::error_code;

    int depth{};       // objects and arrays open
    std::string key;   // the key being read or last read at the current depth
    std::string str;   // the string being read, when wanted
    int where{};       // 1 top-level key, 2 message key, 3 content string, 4 block key
    bool in_message{}; // inside the top-level "message" object
    bool in_content{}; // inside message.content (an array)
    std::string type, block_type, text, subtype;
    bool sidechain{}, meta{}, compact{};
    sluice::TurnFacts facts;

    void reset() {
        depth = 0;
        in_message = in_content = false;
        type.clear();
        subtype.clear();
        sidechain = meta = compact = false;
        facts = {};
    }

    bool wanted() const {
        return (depth == 1 && (key == "type" || key == "subtype" || key == "parent_tool_use_id"))
               || (in_message && depth == 2 && key == "content")
               || (in_content && depth == 4
                   && (key == "type" || key == "text" || key == "tool_use_id" || key == "id"
                       || key == "name"));
    }

    bool on_document_begin(ec_t&) { return true; }

    bool on_document_end(ec_t&) { return true; }

    bool on_object_begin(ec_t&) {
        ++depth;
        if (depth == 2 && key == "message") {
            in_message = true;
        }
        block_type.clear();
        key.clear();
        return true;
    }

    bool on_object_end(std::size_t, ec_t&) {
        if (in_content && depth == 4 && block_type == "tool_use") {
            facts.tool_call = true;
        }
        if (depth == 2) {
            in_message = false;
        }
        --depth;
        return true;
    }

    bool on_array_begin(ec_t&) {
        ++depth;
        if (in_message && depth == 3 && key == "content") {
            in_content = true;
        }
        return true;
    }

    bool on_array_end(std::size_t, ec_t&) {
        if (depth == 3) {
            in_content = false;
        }
        --depth;
        return true;
    }

    bool on_key_part(std::string_view s, std::size_t n, ec_t&) {
        if (n == s.size()) {
            key.clear();
        }
        key.append(s);
        return true;
    }

    bool on_key(std::string_view s, std::size_t n, ec_t& ec) { return on_key_part(s, n, ec); }

    bool on_string_part(std::string_view s, std::size_t n, ec_t&) {
        if (wanted()) {
            if (n == s.size()) {
                str.clear();
            }
            str.append(s);
        }
        return true;
    }

    bool on_string(std::string_view s, std::size_t n, ec_t& ec) {
        if (!wanted()) {
            return true;
        }
        on_string_part(s, n, ec);
        if (depth == 1 && key == "type") {
            type = str;
        } else if (depth == 1 && key == "subtype") {
            subtype = str;
        } else if (depth == 1) {
            facts.subagent = facts.subagent || !str.empty();
        } else if (depth == 2) {
            facts.role =
                str.empty() || str[0] == '<' ? sluice::FrameRole::note : sluice::FrameRole::prompt;
        } else if (key == "type") {
            block_type = str;
            if (str == "tool_result") {
                facts.role = sluice::FrameRole::tool_result;
            }
        } else if (key == "tool_use_id") {
            facts.results_for.push_back(str);
        } else if (
            key == "text" && block_type == "text" && facts.role != sluice::FrameRole::tool_result) {
            facts.role =
                str.empty() || str[0] == '<' ? sluice::FrameRole::note : sluice::FrameRole::prompt;
        }
        return true;
    }

    bool on_number_part(std::string_view, ec_t&) { return true; }

    bool on_int64(std::int64_t, std::string_view, ec_t&) { return true; }

    bool on_uint64(std::uint64_t, std::string_view, ec_t&) { return true; }

    bool on_double(double, std::string_view, ec_t&) { return true; }

    bool on_bool(bool b, ec_t&) {
        if (depth == 1) {
            sidechain = sidechain || (key == "isSidechain" && b);
            meta = meta || (key == "isMeta" && b);
            compact = compact || (key == "isCompactSummary" && b);
        }
        return true;
    }

    bool on_null(ec_t&) { return true; }

    bool on_comment_part(std::string_view, ec_t&) { return true; }

    bool on_comment(std::string_view, ec_t&) { return true; }
};

// NOLINTEND(readability-named-parameter)
// NOLINTEND(readability-identifier-naming,readability-convert-member-functions-to-static)

void BM_RowScanBoostHandler(benchmark::State& state) {
    const auto& r = rows();
    json::basic_parser<FactsHandler> p{json::parse_options{}};
    for (auto _ : state) {
        sluice::TurnScan scan;
        std::size_t opens = 0;
        for (auto l : r.lines) {
            p.reset();
            p.handler().reset();
            boost::system::error_code ec;
            p.write_some(false, l.data(), l.size(), ec);
            if (!ec && sluice::is_frame_type(p.handler().type)) {
                opens += scan.opens_turn(p.handler().type, p.handler().facts) ? 1 : 0;
            }
        }
        benchmark::DoNotOptimize(opens);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_of(r)));
}

BENCHMARK(BM_RowScanBoostHandler);

void BM_RowScanFullFrameParse(benchmark::State& state) {
    const auto& r = rows();
    for (auto _ : state) {
        sluice::TurnScan scan;
        std::size_t opens = 0;
        for (auto l : r.lines) {
            auto f = sluice::Frame::parse(l);
            if (f && (*f)->is_frame()) {
                opens += scan.opens_turn(**f) ? 1 : 0;
            }
        }
        benchmark::DoNotOptimize(opens);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_of(r)));
}

BENCHMARK(BM_RowScanFullFrameParse);

} // namespace
