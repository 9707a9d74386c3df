// configure_logging (logging.hpp): a spdlog formatter per format, on one stdout sink.
#include "logging.hpp"

#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

namespace sluice::app {

namespace {

void append(spdlog::memory_buf_t& dest, std::string_view s) {
    dest.append(s.data(), s.data() + s.size());
}

// UTC with milliseconds: 2026-12-04T18:30:00.123Z.
void append_time(spdlog::memory_buf_t& dest, spdlog::log_clock::time_point t) {
    const auto since = t.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
    const std::time_t tt = static_cast<std::time_t>(secs.count());
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char buf[40];
    const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
    append(dest, buf);
}

std::string_view level_name(spdlog::level::level_enum l) {
    const auto& sv = spdlog::level::to_string_view(l);
    return {sv.data(), sv.size()};
}

// The message with what would break its line (or a JSON string) escaped.
void append_escaped(spdlog::memory_buf_t& dest, std::string_view s, bool json) {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n') {
            append(dest, "\\n");
        } else if (c == '\r') {
            append(dest, "\\r");
        } else if (c == '\t') {
            append(dest, json ? "\\t" : "\t");
        } else if (json && (c == '"' || c == '\\')) {
            dest.push_back('\\');
            dest.push_back(c);
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            append(dest, buf);
        } else {
            dest.push_back(c);
        }
    }
}

class LineFormatter final : public spdlog::formatter {
public:
    explicit LineFormatter(LogFormat format)
        : format_(format) {}

    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        const std::string_view text(msg.payload.data(), msg.payload.size());
        if (format_ == LogFormat::json) {
            append(dest, "{\"time\":\"");
            append_time(dest, msg.time);
            append(dest, "\",\"level\":\"");
            append(dest, level_name(msg.level));
            append(dest, "\",\"message\":\"");
            append_escaped(dest, text, true);
            append(dest, "\"}\n");
            return;
        }
        append_time(dest, msg.time);
        dest.push_back(' ');
        msg.color_range_start = dest.size(); // the sink colours the level on a terminal only
        append(dest, level_name(msg.level));
        msg.color_range_end = dest.size();
        dest.push_back(' ');
        append_escaped(dest, text, false);
        dest.push_back('\n');
    }

    [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<LineFormatter>(format_);
    }

private:
    LogFormat format_;
};

} // namespace

bool parse_log_format(std::string_view s, LogFormat& out) {
    if (s == "text") {
        out = LogFormat::text;
        return true;
    }
    if (s == "json") {
        out = LogFormat::json;
        return true;
    }
    return false;
}

void configure_logging(LogFormat format) {
    // NO_COLOR (no-color.org) turns colour off on a terminal too; off a terminal there is none.
    const char* no_color = std::getenv("NO_COLOR");
    const auto mode = format == LogFormat::json || (no_color != nullptr && *no_color != '\0')
                          ? spdlog::color_mode::never
                          : spdlog::color_mode::automatic;
    auto logger = spdlog::stdout_color_mt("sluice", mode);
    logger->set_formatter(std::make_unique<LineFormatter>(format));
    logger->flush_on(spdlog::level::info); // a service's log is read as it happens
    spdlog::set_default_logger(std::move(logger));
}

} // namespace sluice::app
