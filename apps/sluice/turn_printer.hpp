// What the client prints of a seat's rows for a person: a turn's text, tool calls and a tail of
// their output (`sluice send`, and `sluice tail` on a terminal).
#pragma once

#include <boost/json.hpp>

#include <cstdio>
#include <string>

namespace sluice::app::client {

namespace json = boost::json;

// The last `lines` lines of `text` (a tool's output tail on the terminal).
inline std::string tail_lines(const std::string& text, std::size_t lines) {
    std::size_t pos = text.size();
    while (pos > 0 && (text[pos - 1] == '\n')) {
        --pos;
    }
    const std::size_t end = pos;
    std::size_t n = 0;
    while (pos > 0) {
        if (text[pos - 1] == '\n' && ++n == lines) {
            break;
        }
        --pos;
    }
    return (pos > 0 ? "…\n" : "") + text.substr(pos, end - pos);
}

// A tool result's content as text (a string, or text blocks).
inline std::string result_text(const json::value& content) {
    if (content.is_string()) {
        return std::string(content.as_string());
    }
    std::string out;
    if (content.is_array()) {
        for (const auto& b : content.as_array()) {
            if (b.is_object() && b.as_object().contains("text") && b.at("text").is_string()) {
                out += std::string(b.at("text").as_string());
            }
        }
    }
    return out;
}

// What `sluice send` prints of a turn besides its text: tool calls and a tail of their output,
// thinking (with --thinking), notices, and permission prompts.
struct TurnPrinter {
    bool thinking{false};
    bool at_line_start{true};

    void text(const std::string& s) {
        if (s.empty()) {
            return;
        }
        std::fputs(s.c_str(), stdout);
        at_line_start = s.back() == '\n';
        std::fflush(stdout);
    }

    void line(const std::string& s) {
        if (!at_line_start) {
            std::fputc('\n', stdout);
        }
        std::fprintf(stdout, "%s\n", s.c_str());
        at_line_start = true;
        std::fflush(stdout);
    }

    // An assistant row's tool calls and thinking.
    void assistant_blocks(const json::array& content) {
        for (const auto& b : content) {
            if (!b.is_object()) {
                continue;
            }
            const auto& bo = b.as_object();
            const auto* type = bo.if_contains("type");
            if (type == nullptr || !type->is_string()) {
                continue;
            }
            if (*type == "tool_use") {
                std::string name = bo.contains("name") && bo.at("name").is_string()
                                       ? std::string(bo.at("name").as_string())
                                       : "tool";
                const auto* in = bo.if_contains("input");
                std::string arg = in == nullptr ? "" : json::serialize(*in);
                if (in != nullptr && in->is_object() && in->as_object().contains("command")
                    && in->at("command").is_string()) {
                    arg = std::string(in->at("command").as_string());
                }
                if (arg.size() > 200) {
                    arg = arg.substr(0, 200) + "…";
                }
                line(std::string("⏺ ").append(name).append("(").append(arg).append(")"));
            } else if (
                *type == "thinking" && thinking && bo.contains("thinking")
                && bo.at("thinking").is_string()) {
                line("✻ " + std::string(bo.at("thinking").as_string()));
            }
        }
    }

    // A user row's tool results: a tail of each.
    void tool_results(const json::array& content) {
        for (const auto& b : content) {
            if (!b.is_object() || !b.as_object().contains("type")
                || b.at("type") != "tool_result") {
                continue;
            }
            const auto* c = b.as_object().if_contains("content");
            std::string out = c == nullptr ? "" : tail_lines(result_text(*c), 5);
            const auto* err = b.as_object().if_contains("is_error");
            const bool failed = err != nullptr && err->is_bool() && err->as_bool();
            std::string indented;
            for (const char ch : out) {
                indented += ch;
                if (ch == '\n') {
                    indented += "    ";
                }
            }
            line(std::string("  ⎿ ") + (failed ? "error: " : "") + indented);
        }
    }
};

} // namespace sluice::app::client
